package migrate_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// hpaV1 is the HPA as a controller applies it server-side in
// autoscaling/v1, without the label team.
const hpaV1 = `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},
"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":3}}`

// An HPA applied client-side in autoscaling/v2, then server-side by a
// controller in autoscaling/v1: managedFields hold the client-side fields
// in v2 and the controller's in v1. kubectl's upgrade (csaupgrade) merges
// only entries of the Apply entry's apiVersion and drops the others, so
// migrate said "upgraded" while the label team became nobody's, and the
// controller's next apply left it behind. migrate refuses such an object
// and writes nothing.
func TestMigrationRefusesEntriesOfAnotherAPIVersion(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/hpa-v2.yaml").MustSucceed(t)
	hpas := f.Client.AutoscalingV1().HorizontalPodAutoscalers(f.Namespace)
	if _, err := hpas.Patch(t.Context(), "web", types.ApplyPatchType, []byte(hpaV1), metav1.PatchOptions{FieldManager: gitOpsManager}); err != nil {
		t.Fatal(err)
	}
	entries := func() string {
		h, err := hpas.Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.MarshalIndent(h.ManagedFields, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	before := entries()
	res := f.Hygiene(t, "migrate", "--server-side", "-n", f.Namespace, "--kind", "horizontalpodautoscalers", "--field-manager", gitOpsManager)
	framework.WantLines(t, res.Stdout,
		"HorizontalPodAutoscaler "+f.Namespace+"/web: client-side apply by kubectl-client-side-apply",
		"  fields it owns, which a server-side apply that drops them leaves behind unless upgraded:",
		"    metadata.labels.team",
		"    spec.maxReplicas",
		"    spec.minReplicas",
		"    spec.scaleTargetRef.apiVersion",
		"    spec.scaleTargetRef.kind",
		"    spec.scaleTargetRef.name",
		// autoscaling/v2's default metric, which merge's table does not hold.
		"  fields that stay with client-side apply, as neither last-applied nor the server's defaults have them (the new manager's apply would delete them):",
		"    spec.metrics",
		"  failed: upgrading managedFields: computing the managedFields upgrade: the fields to move are in managedFields entries of different apiVersions (autoscaling/v1, autoscaling/v2), which cannot be merged without the API server's conversion; apply the object once with kubectl apply --server-side --field-manager="+gitOpsManager+" in one apiVersion, then migrate",
		"  last-applied: kept",
		"0 object(s) upgraded, 0 with nothing to upgrade, 1 failed.")
	framework.WantLines(t, res.Stderr, "error: 1 object(s) could not be migrated")
	if diff := cmp.Diff(before, entries()); diff != "" {
		t.Errorf("the refused migration changed managedFields (-before +after):\n%s", diff)
	}
}
