package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The API server keeps a pod spec's deprecated serviceAccount equal to
// serviceAccountName, the name winning when a write sets both (the v1
// conversion, SetDefaults_PodSpec in 1.37): after kubectl set
// serviceaccount, the next apply of a manifest with the alias alone sets
// the alias, which the server sets back to the name. That is no drift; a
// manifest that writes the name puts its value back, which is.
func TestAnalyzeLiveServiceAccountAlias(t *testing.T) {
	const (
		name  = "spec.template.spec.serviceAccountName"
		alias = "spec.template.spec.serviceAccount"
	)
	tests := map[string]struct {
		// podSpec, when set, replaces the pod spec fields of the
		// fixture's last-applied (which has serviceAccount: web alone).
		podSpec map[string]any
		drift   []FieldFact
	}{
		"kubectl set serviceaccount under a manifest with the deprecated alias alone is no drift": {},
		"kubectl set serviceaccount under a manifest with the name is drift of the name": {
			podSpec: map[string]any{"serviceAccountName": "web"},
			drift:   []FieldFact{{Path: mustPath(t, name), Live: "builder", LastApplied: "web"}},
		},
		"kubectl set serviceaccount under a manifest with the name and its alias is drift of the name alone": {
			podSpec: map[string]any{"serviceAccountName": "web", "serviceAccount": "web"},
			drift:   []FieldFact{{Path: mustPath(t, name), Live: "builder", LastApplied: "web"}},
		},
	}
	for desc, tc := range tests {
		t.Run(desc, func(t *testing.T) {
			live := loadFixture(t, "set-serviceaccount-under-alias").live
			if tc.podSpec != nil {
				la, err := ParseLastApplied(live)
				if err != nil {
					t.Fatal(err)
				}
				la = la.DeepCopy()
				spec := la.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				delete(spec, "serviceAccount")
				for k, v := range tc.podSpec {
					spec[k] = v
				}
				setLastApplied(t, live, la)
			}
			ex, err := NewAnalyzer().Explain(live)
			if err != nil {
				t.Fatal(err)
			}
			got := []FieldFact{}
			for _, f := range ex.Analysis.Drift {
				got = append(got, FieldFact{Path: f.Path, Live: f.Live, LastApplied: f.LastApplied})
			}
			if diff := cmp.Diff(append([]FieldFact{}, tc.drift...), got); diff != "" {
				t.Errorf("drift (-want +got):\n%s", diff)
			}
			// kubectl hygiene explain marks the same fields.
			marked := []string{}
			for _, f := range ex.Fields {
				if f.Drift && (f.Path.String() == name || f.Path.String() == alias) {
					marked = append(marked, f.Path.String())
				}
			}
			if diff := cmp.Diff(append([]string{}, paths(tc.drift)...), marked); diff != "" {
				t.Errorf("fields marked drift (-want +got):\n%s", diff)
			}
			an, err := NewAnalyzer().AnalyzeLive(live)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(paths(tc.drift), paths(an.Drift)); diff != "" {
				t.Errorf("AnalyzeLive drift (-want +got):\n%s", diff)
			}
		})
	}
}
