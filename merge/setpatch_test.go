package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A replicas reset's SetPatch sets the live count back in the object after
// the apply, creating spec when the apply left none: a custom resource
// whose manifest drops spec (or sets it to null) gets the merge patch
// {"spec":null}, and an add of /spec/replicas alone would fail there.
func TestReplicasResetSetPatch(t *testing.T) {
	tests := map[string]struct {
		dir  string
		want string
	}{
		"a Widget whose manifest has no spec": {
			dir: "replicas-reset-widget-no-spec", want: `[{"op":"add","path":"/spec","value":{"replicas":5}}]`,
		},
		"a Widget whose manifest sets spec to null": {
			dir: "replicas-reset-widget-null-spec", want: `[{"op":"add","path":"/spec","value":{"replicas":5}}]`,
		},
		"a Deployment the server gives its default count of 1": {
			dir: "seed001-delete-fields", want: `[{"op":"add","path":"/spec/replicas","value":2}]`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, tc.dir)
			_, an, err := NewAnalyzer().predictApply(f.live, f.modified)
			if err != nil {
				t.Fatal(err)
			}
			if an.ReplicasReset == nil {
				t.Fatal("no replicas reset")
			}
			if diff := cmp.Diff(tc.want, an.ReplicasReset.SetPatch); diff != "" {
				t.Errorf("set patch (-want +got):\n%s", diff)
			}
		})
	}
}

// setPatch adds the field when its parent is there, else the first
// missing (or null) ancestor with the rest nested in its value; an
// ancestor that is neither an object nor null gets no patch.
func TestSetPatch(t *testing.T) {
	tests := map[string]struct {
		obj     map[string]any
		path    string
		want    string
		wantErr string
	}{
		"the parent is there": {
			obj: map[string]any{"spec": map[string]any{"size": int64(1)}}, path: "spec.replicas",
			want: `[{"op":"add","path":"/spec/replicas","value":5}]`,
		},
		"no spec": {
			obj: map[string]any{}, path: "spec.replicas", want: `[{"op":"add","path":"/spec","value":{"replicas":5}}]`,
		},
		"spec is null": {
			obj: map[string]any{"spec": nil}, path: "spec.replicas", want: `[{"op":"add","path":"/spec","value":{"replicas":5}}]`,
		},
		"a deeper path of a custom resource": {
			obj: map[string]any{"spec": map[string]any{}}, path: "spec.scale.count",
			want: `[{"op":"add","path":"/spec/scale","value":{"count":5}}]`,
		},
		"spec is a string": {
			obj: map[string]any{"spec": "x"}, path: "spec.replicas",
			wantErr: "building set patch for spec.replicas: spec is neither an object nor null",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := ParsePath(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := setPatch(tc.obj, p, int64(5))
			if gotErr := errString(err); gotErr != tc.wantErr {
				t.Fatalf("error %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("set patch (-want +got):\n%s", diff)
			}
		})
	}
}
