package chart_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// TestPolicyConfigIsAValidConfig checks that the config.yaml each golden
// snapshot renders is what the server's --policy-config accepts: a
// policy.Config decoded strictly (an unknown key fails, as in the server)
// that passes Validate, and that the full scenario's exemptions and
// ownership rules reach it.
func TestPolicyConfigIsAValidConfig(t *testing.T) {
	wantExemptions := map[string]policy.Exemptions{
		"full": {
			Users:           []string{"admin@example.com"},
			ServiceAccounts: []string{"argocd/argocd-application-controller", "flux-system/*"},
			FieldManagers:   []string{"helm", "Terraform"},
		},
	}
	// The full scenario's own, Argo CD and Flux ownership rules.
	wantOwnership := map[string]int{"full": 3}
	for _, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", scenario, "manifests.golden.yaml"))
			if err != nil {
				t.Fatalf("reading the golden manifests: %v", err)
			}
			var cfg policy.Config
			found := false
			for _, obj := range decode(t, string(raw)) {
				if obj.GetKind() != "ConfigMap" {
					continue
				}
				var cm corev1.ConfigMap
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &cm); err != nil {
					t.Fatalf("converting ConfigMap %s: %v", obj.GetName(), err)
				}
				doc, ok := cm.Data["config.yaml"]
				if !ok {
					continue
				}
				found = true
				if err := yaml.UnmarshalStrict([]byte(doc), &cfg); err != nil {
					t.Fatalf("decoding config.yaml as policy.Config: %v", err)
				}
			}
			if !found {
				t.Fatal("no ConfigMap with config.yaml rendered")
			}
			if errs := cfg.Validate(); len(errs) > 0 {
				t.Errorf("config.yaml is not valid: %v", errs.ToAggregate())
			}
			if diff := cmp.Diff(wantExemptions[scenario], cfg.Exemptions); diff != "" {
				t.Errorf("exemptions (-want +got):\n%s", diff)
			}
			if got, want := len(cfg.Ownership), wantOwnership[scenario]; got != want {
				t.Errorf("ownership rules: got %d, want %d", got, want)
			}
		})
	}
}
