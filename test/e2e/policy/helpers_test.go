package policy_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const seeds = "../seeds/testdata/"

// deniedPrefix is how kubectl shows a denial of the validating webhook.
const deniedPrefix = `admission webhook "validate.apply-hygiene.io" denied the request: `

// wantLines compares output with the expected lines exactly.
func wantLines(t *testing.T, output string, want ...string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(output, "\n"), "\n")
	if output == "" {
		got = nil
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output lines mismatch (-want +got):\n%s", diff)
	}
}

// wantMatch checks that output is exactly one line per pattern, each
// matching its (anchored) pattern.
func wantMatch(t *testing.T, output string, patterns ...string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(output, "\n"), "\n")
	if len(got) != len(patterns) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(patterns), output)
	}
	for i, p := range patterns {
		if !regexp.MustCompile("^" + p + "$").MatchString(got[i]) {
			t.Errorf("line %d = %q\nwant match for %q", i+1, got[i], p)
		}
	}
}

func quote(s string) string { return regexp.QuoteMeta(s) }

func jsonpath(t *testing.T, k framework.Kubectl, object, expr string) string {
	t.Helper()
	return k.Run(t, "get", object, "-o", "jsonpath="+expr).MustSucceed(t).Stdout
}

// breakGlass returns kubectl as a member of the break-glass group with the
// edit role in the test's namespace.
func breakGlass(t *testing.T, f *framework.Framework, user string) framework.Kubectl {
	t.Helper()
	f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: breakGlassGroup})
	return f.KubectlAs(t, user, breakGlassGroup)
}

// labelNamespace sets labels on the test's namespace; call it before the
// first reviewed write there, as the server caches namespace labels.
func labelNamespace(t *testing.T, f *framework.Framework, labels ...string) {
	t.Helper()
	f.Kubectl.Run(t, append([]string{"label", "namespace", f.Namespace, "--overwrite"}, labels...)...).MustSucceed(t)
}

// waitForRevisions waits until the controller recorded n revisions.
func waitForRevisions(t *testing.T, f *framework.Framework, selector string, n int) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, "revisions of "+selector, func(ctx context.Context) (bool, error) {
		crs, err := f.Client.AppsV1().ControllerRevisions(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		return len(crs.Items) >= n, nil
	})
}
