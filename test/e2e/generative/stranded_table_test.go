package generative_test

import (
	"slices"
	"testing"
)

// TestStrandedByTheMove allows the orphans that kubectl's migration to
// server-side apply strands (seed 281166, sequence 018): a field of the
// old last-applied that only kubectl apply's client-side entry owns once
// last-applied is gone, and that the manifest leaves out; not one another
// entry owns too, one the manifest has, nor any while last-applied stays.
func TestStrandedByTheMove(t *testing.T) {
	const la = `{"metadata":{"name":"web","labels":{"app":"web","team":"a"}}}`
	entry := func(manager, operation, labels string) string {
		return `{"manager":"` + manager + `","operation":"` + operation + `","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{` + labels + `}}}}`
	}
	object := func(entries ...string) string {
		list := ""
		for i, e := range entries {
			if i > 0 {
				list += ","
			}
			list += e
		}
		return `{"metadata":{"name":"web","labels":{"app":"web","team":"a"},"managedFields":[` + list + `]}}`
	}
	manifest := decodeJSON(t, `{"metadata":{"name":"web","labels":{"app":"web"}}}`)
	tests := []struct {
		name     string
		effect   string
		effectLA string
		manifest map[string]any
		want     []string
	}{
		{"only client-side apply's entry owns it", object(entry("kubectl-client-side-apply", "Update", `"f:app":{},"f:team":{}`), entry("platform", "Apply", `"f:app":{}`)), "", manifest,
			[]string{"metadata.labels.team"}},
		{"another entry owns it too", object(entry("kubectl-client-side-apply", "Update", `"f:team":{}`), entry("kubectl-label", "Update", `"f:team":{}`)), "", manifest, nil},
		{"a person's entry owns it", object(entry("kubectl-label", "Update", `"f:team":{}`)), "", manifest, nil},
		{"the manifest has it", object(entry("kubectl-client-side-apply", "Update", `"f:team":{}`)), "", decodeJSON(t, `{"metadata":{"labels":{"team":"a"}}}`), nil},
		{"last-applied stays", object(entry("kubectl-client-side-apply", "Update", `"f:team":{}`)), la, manifest, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strs(strandedByTheMove(withLastApplied(t, object(), la), withLastApplied(t, tc.effect, tc.effectLA), tc.manifest))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("strandedByTheMove = %q, want %q", got, tc.want)
			}
		})
	}
}
