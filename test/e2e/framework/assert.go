package framework

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeniedPrefix is how kubectl shows a denial of apply-hygiene's validating
// webhook, before the message.
const DeniedPrefix = `admission webhook "validate.apply-hygiene.io" denied the request: `

// WantLines compares output with the expected lines exactly; no lines for
// empty output.
func WantLines(t *testing.T, output string, want ...string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(output, "\n"), "\n")
	if output == "" {
		got = nil
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output lines mismatch (-want +got):\n%s", diff)
	}
}

// SortedLines returns output with its lines sorted, for output whose order
// the API server decides (warnings of two webhooks; managedFields entries,
// which it orders by time to the second and then by manager).
func SortedLines(output string) string {
	lines := strings.Split(strings.TrimSuffix(output, "\n"), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// WantMatch checks that output is exactly one line per pattern, each
// matching its (anchored) regular expression, and returns the submatches.
func WantMatch(t *testing.T, output string, patterns ...string) [][]string {
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

// JSONPath prints one jsonpath expression of object with kubectl.
func (k Kubectl) JSONPath(t *testing.T, object, expr string) string {
	t.Helper()
	return k.Run(t, "get", object, "-o", "jsonpath="+expr).MustSucceed(t).Stdout
}

// WaitForRevisions waits until the controllers have recorded n revisions
// (ReplicaSets or ControllerRevisions) for the selector in the test's
// namespace: rollout undo reads them.
func (f *Framework) WaitForRevisions(t *testing.T, selector string, n int) {
	t.Helper()
	Eventually(t, 30*time.Second, "revisions of "+selector, func(ctx context.Context) (bool, error) {
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
