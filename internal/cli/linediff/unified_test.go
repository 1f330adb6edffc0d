package linediff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnifiedDiff(t *testing.T) {
	tests := map[string]struct {
		a, b, want string
	}{
		"equal texts have no diff": {a: "a\nb\n", b: "a\nb\n", want: ""},
		"a line removed in the middle, three lines of context": {
			a:    "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			b:    "1\n2\n3\n4\n6\n7\n8\n9\n",
			want: "--- from\n+++ to\n@@ -2,7 +2,6 @@\n 2\n 3\n 4\n-5\n 6\n 7\n 8\n",
		},
		"two changes far apart make two hunks": {
			a:    "a\n1\n2\n3\n4\n5\n6\n7\n8\nb\n",
			b:    "A\n1\n2\n3\n4\n5\n6\n7\n8\nB\n",
			want: "--- from\n+++ to\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-b\n+B\n",
		},
		"lines added to an empty text": {
			a: "", b: "x\ny\n",
			want: "--- from\n+++ to\n@@ -0,0 +1,2 @@\n+x\n+y\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Unified("from", "to", tc.a, tc.b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
