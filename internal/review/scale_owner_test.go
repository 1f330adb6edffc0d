package review_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// A /scale write changes the count itself: the API server gives it to the
// scale's manager. The parent as scaled keeps the stored managedFields, so
// when no entry owned spec.replicas (a KEDA scale to 0 sends "spec":{} and
// owns nothing), the count looked changed by another mutating webhook and
// kubectl scale from 0 of a Deployment whose last-applied records
// replicas: 0 (kubectl edit --save-config) passed silently (generative
// seed 202, sequence 000, step 13).
func TestScaleFromZeroIsTheScalesChange(t *testing.T) {
	engine, err := policy.New(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	parent := applied(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":0}}`)
	parent.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`),
	}})
	calls := 0
	r := review.NewReviewer(nil, engine, scaleCluster{parent: parent, calls: &calls})
	rv, err := r.Review(t.Context(), scaleRequest(t, deploymentsGVR, 2), review.Validate)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range rv.Decisions {
		got = append(got, fmt.Sprintf("%s %s [%s]", d.Rule, d.Action, strings.Join(d.Paths, " ")))
	}
	if diff := cmp.Diff([]string{"imperative-edit deny [spec.replicas]"}, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}
