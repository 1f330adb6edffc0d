package review

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// handedOver is the manifest of the Deployment below without replicas:
// last-applied after their hand-over to kubectl scale or an autoscaler.
const handedOver = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
	`"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`

// scaledBehindStamp is the Deployment of manifest that kubectl scale set
// to 5 replicas, with last-applied la and the stamp annotation v that a
// second mutating webhook (a mesh injector) puts on every write, after
// the API server tracked the write's fields: no entry owns it. writer's
// entry, of the second at, owns last-applied; kubectl-client-side-apply's
// owns the image, kubectl scale's the replicas.
func scaledBehindStamp(t *testing.T, la, v, writer string, at int) *unstructured.Unstructured {
	t.Helper()
	obj := scaled(t, deployment(t, "nginx:1", la), 5)
	obj.SetAnnotations(map[string]string{lastAppliedAnnotation: la, stampKey: v})
	obj.SetLabels(map[string]string{"team": "a"})
	const image = `"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}`
	const annotation = `"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}`
	entry := func(manager, subresource, fields string, second int) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Subresource: subresource,
			Time: &metav1.Time{Time: time.Date(2026, 11, 27, 2, 0, second, 0, time.UTC)}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	entries := []metav1.ManagedFieldsEntry{
		entry(merge.ClientSideApplyManager, "", "{"+image+"}", 0),
		entry("kubectl", "scale", `{"f:spec":{"f:replicas":{}}}`, 1),
		entry("kubectl-label", "", `{"f:metadata":{"f:labels":{".":{},"f:team":{}}}}`, 2),
	}
	if writer == merge.ClientSideApplyManager {
		entries[0] = entry(writer, "", "{"+annotation+","+image+"}", at)
	} else {
		entries = append(entries, entry(writer, "", "{"+annotation+"}", at))
	}
	obj.SetManagedFields(entries)
	return obj
}

// kubectl apply edit-last-applied and kubectl hygiene handover (field
// manager kubectl-client-side-apply; handover adds its record of the
// hand-over, merge.HandedOverAnnotation) and set-last-applied (no field
// manager: kubectl) that delete replicas from last-applied are the
// documented hand-over of the field to kubectl scale; behind a webhook
// that stamps an annotation on every write they still change nothing else
// the writer sent. Taken for an apply, the hand-over drew
// [orphaned-field] on the very field handed over, with a command that
// removes it (and its prune action removed it in the same request).
func TestHandOverBehindStampingWebhookIsASaveConfig(t *testing.T) {
	// atFive is a manifest that sets the replicas the object has.
	atFive := strings.Replace(manifest, `"replicas":2`, `"replicas":5`, 1)
	tests := map[string]struct {
		manager, writer string
		from, to        string
		want            policy.Classification
		// decides is whether any rule decides on it.
		decides bool
		// record is the hand-over's record (merge.HandedOverAnnotation)
		// that the write adds, if any; with recordBefore the object had it
		// already.
		record       string
		recordBefore bool
		// label is whether the write also changes the team label.
		label bool
	}{
		"kubectl apply edit-last-applied": {manager: merge.ClientSideApplyManager, writer: merge.ClientSideApplyManager,
			from: manifest, to: handedOver, want: policy.SaveConfig},
		"kubectl hygiene handover, which records the hand-over": {manager: merge.ClientSideApplyManager, writer: merge.ClientSideApplyManager,
			from: manifest, to: handedOver, want: policy.SaveConfig, record: `["spec.replicas"]`},
		"kubectl apply set-last-applied": {writer: "kubectl", from: manifest, to: handedOver, want: policy.SaveConfig},
		// kubectl hygiene handover writes its record first, as its own
		// manager, and last-applied after (the rows above).
		"kubectl hygiene handover's record, before last-applied's patch": {manager: merge.HandoverRecordManager, writer: merge.HandoverRecordManager,
			from: manifest, to: manifest, want: policy.SaveConfig, record: `["spec.replicas"]`},
		"... a record that names the paths already, unchanged": {manager: merge.HandoverRecordManager, writer: merge.HandoverRecordManager,
			from: manifest, to: manifest, want: policy.SaveConfig, record: `["spec.replicas"]`, recordBefore: true},
		// Anything else that manager writes is no hand-over.
		"that manager's write of anything else": {manager: merge.HandoverRecordManager, writer: merge.HandoverRecordManager,
			from: manifest, to: manifest, want: policy.Imperative, record: `["spec.replicas"]`, label: true},
		// Still an apply, with the orphaned label as its finding.
		"kubectl apply of a manifest the object matches": {manager: merge.ClientSideApplyManager, writer: merge.ClientSideApplyManager,
			from: handedOver, to: atFive, want: policy.ClientSideApply, decides: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old := scaledBehindStamp(t, tc.from, "1", merge.ClientSideApplyManager, 0)
			new := scaledBehindStamp(t, tc.to, "2", tc.writer, 9)
			if tc.record != "" {
				annotations := new.GetAnnotations()
				annotations[merge.HandedOverAnnotation] = tc.record
				new.SetAnnotations(annotations)
			}
			if tc.recordBefore {
				annotations := old.GetAnnotations()
				annotations[merge.HandedOverAnnotation] = tc.record
				old.SetAnnotations(annotations)
			}
			if tc.label {
				new.SetLabels(map[string]string{"team": "b"})
			}
			r := NewReviewer(nil, engine(t, policy.Config{}), cluster{})
			u := Update{FieldManager: tc.manager, User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new}
			rv, err := r.ReviewUpdate(t.Context(), u, Validate)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rv.Classification()); diff != "" {
				t.Errorf("classification (-want +got):\n%s", diff)
			}
			if got := decisionsOf(rv); len(got) > 0 != tc.decides {
				t.Errorf("decisions: %v", got)
			}
		})
	}
}
