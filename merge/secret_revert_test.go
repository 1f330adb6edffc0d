package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectl hygiene diff reviews the apply it predicts with live's
// managedFields: an apply whose manifest writes stringData.password puts
// back data.password that kubectl patch changed, and that revert is not
// taken for a mutating webhook's change because the manifest, as stored,
// has the field (test/e2e/kinds: diff did not predict the warning the
// apply printed).
func TestSecretRevertPredictedWithLiveManagedFields(t *testing.T) {
	manifest := mustYAML(t, []byte(`
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: default}
stringData: {password: s3cr3t-v1}
`))
	live := mustYAML(t, []byte(`
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: default}
data: {password: aHVudGVyMg==}
type: Opaque
`))
	setLastApplied(t, live, manifest)
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:type":{}}`)},
		{Manager: "kubectl-patch", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:data":{".":{},"f:password":{}}}`)},
	})
	res, err := NewAnalyzer().ApplyManifest(manifest, live)
	if err != nil {
		t.Fatal(err)
	}
	an, err := NewAnalyzer().AnalyzeClientSideApply(live, res.Result)
	if err != nil {
		t.Fatal(err)
	}
	got := paths(an.Reverts)
	if diff := cmp.Diff([]string{"data.password"}, got); diff != "" {
		t.Errorf("reverts (-want +got):\n%s", diff)
	}
}
