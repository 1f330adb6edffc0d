package migrate_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// clientGoApply applies the manifest server-side through client-go as
// manager, the way a controller does: a plain apply patch, without the
// managedFields upgrade that kubectl apply --server-side adds.
func clientGoApply(t *testing.T, f *framework.Framework, manifest, manager string) {
	t.Helper()
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("converting %s: %v", manifest, err)
	}
	_, err = f.Client.AppsV1().Deployments(f.Namespace).Patch(t.Context(), "web", types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: manager})
	if err != nil {
		t.Fatalf("server-side apply of %s as %s: %v", manifest, manager, err)
	}
}

// state is what the tests check of the Deployment web.
type state struct {
	// Team is the label team; "" when absent.
	Team string
	// Env are the names of the container's env vars.
	Env []string
	// Managers are the managedFields entries but the controller's, as
	// "manager operation", sorted.
	Managers []string
	// LastApplied is set when the annotation is there.
	LastApplied bool
}

// stateOf reads web's state with kubectl.
func stateOf(t *testing.T, f *framework.Framework) state {
	t.Helper()
	out := f.Kubectl.Run(t, "get", "deployment/web", "-o", "json", "--show-managed-fields").MustSucceed(t).Stdout
	var d struct {
		Metadata struct {
			Labels        map[string]string `json:"labels"`
			Annotations   map[string]string `json:"annotations"`
			ManagedFields []struct {
				Manager   string `json:"manager"`
				Operation string `json:"operation"`
			} `json:"managedFields"`
		} `json:"metadata"`
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Env []struct {
							Name string `json:"name"`
						} `json:"env"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("decoding deployment/web: %v", err)
	}
	s := state{Team: d.Metadata.Labels["team"], Env: []string{}, Managers: []string{}}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		s.Env = append(s.Env, e.Name)
	}
	for _, m := range d.Metadata.ManagedFields {
		// The controller's status writes come and go with its timing.
		if m.Manager != "kube-controller-manager" {
			s.Managers = append(s.Managers, m.Manager+" "+m.Operation)
		}
	}
	slices.Sort(s.Managers)
	_, s.LastApplied = d.Metadata.Annotations["kubectl.kubernetes.io/last-applied-configuration"]
	return s
}

// managedFieldsOf returns web's managedFields entries but the
// controller's, as JSON: whatever migrate writes changes them.
func managedFieldsOf(t *testing.T, f *framework.Framework) string {
	t.Helper()
	out := f.Kubectl.Run(t, "get", "deployment/web", "-o", "json", "--show-managed-fields").MustSucceed(t).Stdout
	var d struct {
		Metadata struct {
			Annotations   map[string]string `json:"annotations"`
			ManagedFields []map[string]any  `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("decoding deployment/web: %v", err)
	}
	var entries []map[string]any
	for _, e := range d.Metadata.ManagedFields {
		if e["manager"] != "kube-controller-manager" {
			entries = append(entries, e)
		}
	}
	data, err := json.MarshalIndent(map[string]any{"annotations": d.Metadata.Annotations, "managedFields": entries}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
