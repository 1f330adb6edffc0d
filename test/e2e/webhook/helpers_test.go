package webhook_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const seeds = "../seeds/testdata/"

// deniedPrefix is how kubectl shows a denial of apply-hygiene's
// validating webhook.
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
// matching its (anchored) pattern, and returns the submatches.
func wantMatch(t *testing.T, output string, patterns ...string) [][]string {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(output, "\n"), "\n")
	if len(got) != len(patterns) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(patterns), output)
	}
	var subs [][]string
	for i, p := range patterns {
		m := regexp.MustCompile("^" + p + "$").FindStringSubmatch(got[i])
		if m == nil {
			t.Fatalf("line %d = %q\nwant match for %q", i+1, got[i], p)
		}
		subs = append(subs, m)
	}
	return subs
}

func jsonpath(t *testing.T, k framework.Kubectl, object, expr string) string {
	t.Helper()
	return k.Run(t, "get", object, "-o", "jsonpath="+expr).MustSucceed(t).Stdout
}

func resourceVersion(t *testing.T, k framework.Kubectl, object string) string {
	t.Helper()
	return jsonpath(t, k, object, "{.metadata.resourceVersion}")
}

// waitForRevisions waits until the object's controller has recorded n
// revisions (ReplicaSets or ControllerRevisions) for the selector.
func waitForRevisions(t *testing.T, f *framework.Framework, selector string, n int) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, "revisions of "+selector, func(ctx context.Context) (bool, error) {
		opts := metav1.ListOptions{LabelSelector: selector}
		rs, err := f.Client.AppsV1().ReplicaSets(f.Namespace).List(ctx, opts)
		if err != nil {
			return false, err
		}
		crs, err := f.Client.AppsV1().ControllerRevisions(f.Namespace).List(ctx, opts)
		if err != nil {
			return false, err
		}
		return len(rs.Items)+len(crs.Items) >= n, nil
	})
}

func regexpQuote(s string) string { return regexp.QuoteMeta(s) }
