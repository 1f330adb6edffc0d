package generative_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The oracle counts a count a /scale wrote from 0 as unattributed
// (scaledFromZero): the API server records no manager of it, since the
// Scale's replicas is omitempty and a count of 0 is no field of it. This
// pins that fact on the API server the tests run, not the oracle's word
// for it: kubectl scale from 0 leaves spec.replicas owned by no entry,
// and kubectl scale from 2 gives it to kubectl's scale entry.
func TestScaleFromZeroLeavesTheCountUnowned(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"apply-hygiene.io/ignore":"true"}},` +
		`"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`
	if res := k.RunWithInput(t, manifest, "create", "-f", "-"); res.ExitCode != 0 {
		t.Fatalf("kubectl create: %s", res.Stderr)
	}
	owners := func() []string {
		res := k.Run(t, "get", "deployment/web", "-o", "json", "--show-managed-fields")
		var obj struct {
			Metadata struct {
				ManagedFields []struct {
					Manager     string         `json:"manager"`
					Subresource string         `json:"subresource"`
					FieldsV1    map[string]any `json:"fieldsV1"`
				} `json:"managedFields"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(res.Stdout), &obj); err != nil {
			t.Fatalf("decoding kubectl get: %v\n%s", err, res.Stderr)
		}
		var out []string
		for _, e := range obj.Metadata.ManagedFields {
			spec, _ := e.FieldsV1["f:spec"].(map[string]any)
			if _, ok := spec["f:replicas"]; ok {
				out = append(out, e.Manager+"/"+e.Subresource)
			}
		}
		return out
	}
	for _, step := range []struct {
		replicas string
		want     []string
	}{
		{"3", []string{"kubectl/scale"}},
		{"0", nil},
		{"1", nil},
	} {
		if res := k.Run(t, "scale", "deployment/web", "--replicas="+step.replicas); res.ExitCode != 0 {
			t.Fatalf("kubectl scale --replicas=%s: %s", step.replicas, res.Stderr)
		}
		if got := owners(); !slices.Equal(got, step.want) {
			t.Errorf("after kubectl scale --replicas=%s, spec.replicas is owned by %v, want %v", step.replicas, got, step.want)
		}
	}
}
