package framework

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Delete removes a field or map key, also inside a named list element,
// and never a list element itself.
func TestFieldPathDelete(t *testing.T) {
	const obj = `{"metadata":{"labels":{"team":"a"}},"spec":{"containers":[{"name":"app","image":"a:1","imagePullPolicy":"Always"}]}}`
	containers := Path("spec", "containers")
	tests := map[string]struct {
		p       FieldPath
		deleted bool
		want    string
	}{
		"a field of a named list element": {
			p: containers.Named("app").Key("imagePullPolicy"), deleted: true,
			want: `{"metadata":{"labels":{"team":"a"}},"spec":{"containers":[{"name":"app","image":"a:1"}]}}`,
		},
		"a map key": {
			p: Path("metadata", "labels", "team"), deleted: true,
			want: `{"metadata":{"labels":{}},"spec":{"containers":[{"name":"app","image":"a:1","imagePullPolicy":"Always"}]}}`,
		},
		"a list element":   {p: containers.Named("app"), want: obj},
		"an absent field":  {p: containers.Named("app").Key("command"), want: obj},
		"an absent parent": {p: containers.Named("web").Key("image"), want: obj},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got, want map[string]any
			if err := json.Unmarshal([]byte(obj), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if deleted := tc.p.Delete(got); deleted != tc.deleted {
				t.Errorf("Delete(%s) = %v, want %v", tc.p, deleted, tc.deleted)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("object after Delete(%s) (-want +got):\n%s", tc.p, diff)
			}
		})
	}
}
