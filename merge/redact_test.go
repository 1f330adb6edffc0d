package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestRedactSecret(t *testing.T) {
	for name, tc := range map[string]struct {
		in, want map[string]any
	}{
		"a Secret's data, stringData and last-applied are redacted": {
			in: map[string]any{"kind": "Secret", "data": map[string]any{"a": "c2VjcmV0", "gone": nil}, "stringData": map[string]any{"b": "secret"},
				"metadata": map[string]any{"name": "s", "annotations": map[string]any{LastAppliedAnnotation: `{"data":{"a":"c2VjcmV0"}}`, "x": "y"}}},
			want: map[string]any{"kind": "Secret", "data": map[string]any{"a": Redacted, "gone": nil}, "stringData": map[string]any{"b": Redacted},
				"metadata": map[string]any{"name": "s", "annotations": map[string]any{LastAppliedAnnotation: Redacted, "x": "y"}}},
		},
		"a Secret without values is as it was": {
			in:   map[string]any{"kind": "Secret", "metadata": map[string]any{"name": "s"}},
			want: map[string]any{"kind": "Secret", "metadata": map[string]any{"name": "s"}},
		},
		"a ConfigMap's data is shown": {
			in:   map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "b"}},
			want: map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "b"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := runtime.DeepCopyJSON(tc.in)
			if diff := cmp.Diff(tc.want, RedactSecret(tc.in)); diff != "" {
				t.Errorf("RedactSecret (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Errorf("RedactSecret changed its argument (-before +after):\n%s", diff)
			}
		})
	}
}

func TestRedactSecretJSON(t *testing.T) {
	for name, tc := range map[string]struct {
		kind, in, want string
	}{
		"a Secret's last-applied":      {kind: "Secret", in: `{"kind":"Secret","data":{"a":"c2VjcmV0"}}`, want: `{"data":{"a":"\u003credacted\u003e"},"kind":"Secret"}`},
		"a Secret's undecodable value": {kind: "Secret", in: `{"data":`, want: Redacted},
		"a Deployment's is left as is": {kind: "Deployment", in: `{"spec":{}}`, want: `{"spec":{}}`},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RedactSecretJSON(tc.kind, tc.in)); diff != "" {
				t.Errorf("RedactSecretJSON (-want +got):\n%s", diff)
			}
		})
	}
}
