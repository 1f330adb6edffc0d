package review

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// kubectl apply edit-last-applied takes the annotation team out of
// last-applied, under kubectl apply's own field manager: the mutating pass
// records the hand-over (orphaned-field's repair, which the empty analysis
// of a save-config would have skipped), the validating pass of the
// repaired object finds nothing.
func TestEditLastAppliedHandOverIsRecordedByTheMutatingPass(t *testing.T) {
	old, new := editLastAppliedObjects(t)
	if got := classify(newWrite("", merge.ClientSideApplyManager, authenticationv1.UserInfo{Username: "alice"}, old, new)); got != policy.SaveConfig {
		t.Fatalf("classified %s, want %s", got, policy.SaveConfig)
	}
	got, annotations := admitRecord(t, Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new, FieldManager: merge.ClientSideApplyManager})
	if diff := cmp.Diff([]string{"orphaned-field repair metadata.annotations[apply-hygiene.io/handed-over]"}, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if got := annotations[merge.HandedOverAnnotation]; got != `["metadata.annotations.team"]` {
		t.Errorf("record %q, want the annotation team", got)
	}
}

// The same write under helm, of a last-applied that only helm wrote (a
// chart's template copied from kubectl get -o yaml, which helm upgrade
// changes): kubectl apply never read it, so nothing is handed over from
// it and nothing is recorded.
func TestHelmShrinkingItsOwnLastAppliedRecordsNothing(t *testing.T) {
	old, new := editLastAppliedObjects(t)
	for _, u := range []*unstructured.Unstructured{old, new} {
		u.SetManagedFields([]metav1.ManagedFieldsEntry{entry("helm", helmFields, 10)})
	}
	r := NewReviewer(nil, engine(t, policy.Config{}), cluster{})
	a, err := r.Admit(t.Context(), Update{User: authenticationv1.UserInfo{Username: "system:serviceaccount:ci:helm"}, Old: old, New: new, FieldManager: "helm"})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Decisions(); len(got) > 0 || a.Patched != nil {
		t.Errorf("decisions %v, patched %s; want none", got, a.Patched)
	}
}

// helmFields is the entry of helm, which made the whole Deployment of
// editLastAppliedObjects from its chart, last-applied included.
const helmFields = `{"f:metadata":{"f:annotations":{".":{},"f:team":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},` +
	`"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},` +
	`"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`

// A second kubectl apply edit-last-applied under the same --field-manager
// (ci-deployer), whose entry then owns nothing but last-applied and the
// first hand-over's record: the last-applied is kubectl's, and the
// hand-over is recorded as the first one was (adversarial review of
// generative seed 281183's settlement).
func TestASecondEditLastAppliedUnderItsOwnFieldManagerIsRecorded(t *testing.T) {
	old, new := editLastAppliedObjects(t)
	const fields = `{"f:metadata":{"f:annotations":{"f:apply-hygiene.io/handed-over":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`
	for _, u := range []*unstructured.Unstructured{old, new} {
		u.SetManagedFields([]metav1.ManagedFieldsEntry{entry(merge.ClientSideApplyManager, helmFields, 0), entry("ci-deployer", fields, 10)})
		a := u.GetAnnotations()
		a[merge.HandedOverAnnotation] = `["metadata.labels.tier"]`
		u.SetAnnotations(a)
	}
	// The client-side apply's entry lost last-applied to ci-deployer.
	for _, u := range []*unstructured.Unstructured{old, new} {
		mfs := u.GetManagedFields()
		mfs[0].FieldsV1 = metav1.NewFieldsV1(strings.Replace(helmFields, `,"f:kubectl.kubernetes.io/last-applied-configuration":{}`, "", 1))
		u.SetManagedFields(mfs)
	}
	_, annotations := admitRecord(t, Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new, FieldManager: "ci-deployer"})
	if got := annotations[merge.HandedOverAnnotation]; got != `["metadata.annotations.team","metadata.labels.tier"]` {
		t.Errorf("record %q, want the label tier and the annotation team", got)
	}
}

// editLastAppliedObjects are a Deployment before and after kubectl apply
// edit-last-applied took its annotation team out of last-applied.
func editLastAppliedObjects(t *testing.T) (old, new *unstructured.Unstructured) {
	t.Helper()
	obj := func(la string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ns
  annotations: {team: a}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.14.2"}]
`), &u.Object); err != nil {
			t.Fatal(err)
		}
		a := u.GetAnnotations()
		a[merge.LastAppliedAnnotation] = la
		u.SetAnnotations(a)
		return u
	}
	old = obj(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"team":"a"},"name":"web","namespace":"ns"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx"}]}}}}`)
	new = obj(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"ns"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx"}]}}}}`)
	return old, new
}

// A server-side apply whose applier came to own the annotations (kubectl
// apply --server-side's migration of last-applied's manager) dropped them
// all, the hand-over's record with last-applied (generative seed 281189,
// sequence 010); a client-side apply whose last-applied held a copy of
// the record (kubectl edit --save-config copied it there) dropped it from
// an annotations map that stays. The mutating pass writes the record back
// as it was, the whole map where none is left; the validating pass of the
// patched object finds nothing of it.
func TestARecordAnApplyDroppedIsWrittenBack(t *testing.T) {
	const record = `["metadata.annotations.team"]`
	tests := map[string]struct {
		manager    string
		ssa        bool
		keptBefore map[string]string // new's annotations
	}{
		"kubectl apply --server-side --field-manager=platform": {manager: "platform", ssa: true},
		"kubectl apply of a manifest without the record": {
			manager:    merge.ClientSideApplyManager,
			keptBefore: map[string]string{"team": "a", merge.LastAppliedAnnotation: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx"}]}}}}`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := editLastAppliedObjects(t)
			a := new.GetAnnotations()
			a[merge.HandedOverAnnotation] = record
			a[merge.LastAppliedAnnotation] = strings.Replace(a[merge.LastAppliedAnnotation], `"annotations":{}`, `"annotations":{"`+merge.HandedOverAnnotation+`":"[]"}`, 1)
			old.SetAnnotations(a)
			new.SetAnnotations(tc.keptBefore)
			if tc.ssa {
				new.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: tc.manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1",
					FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)}})
			}
			got, annotations := admitRecord(t, Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new, FieldManager: tc.manager})
			if !slices.Contains(got, "orphaned-field repair metadata.annotations[apply-hygiene.io/handed-over]") {
				t.Fatalf("decisions %q, want orphaned-field's repair of the record", got)
			}
			want := maps.Clone(tc.keptBefore)
			if want == nil {
				want = map[string]string{}
			}
			want[merge.HandedOverAnnotation] = record
			if diff := cmp.Diff(want, annotations); diff != "" {
				t.Errorf("annotations after the mutating pass (-want +got):\n%s", diff)
			}
		})
	}
}

// A kubectl apply that changes nothing but last-applied, whose manifest
// leaves out a field that stays set (a hand-over) and the record's copy
// that last-applied held (kubectl edit --save-config put it there), drops
// the record as it hands the field over: one repair writes the record
// with both, the earlier entry kept (adversarial review: two repairs of
// the one annotation failed the mutating pass).
func TestAnApplyThatHandsOverAndDropsTheRecordWritesOneRecord(t *testing.T) {
	old, new := editLastAppliedObjects(t)
	a := old.GetAnnotations()
	a[merge.HandedOverAnnotation] = `["metadata.labels.tier"]`
	a[merge.LastAppliedAnnotation] = strings.Replace(a[merge.LastAppliedAnnotation], `"annotations":{"team":"a"}`, `"annotations":{"`+merge.HandedOverAnnotation+`":"[\"metadata.labels.tier\"]","team":"a"}`, 1)
	old.SetAnnotations(a)
	got, annotations := admitRecord(t, Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new, FieldManager: merge.ClientSideApplyManager})
	if diff := cmp.Diff([]string{"orphaned-field repair metadata.annotations[apply-hygiene.io/handed-over]"}, got); diff != "" {
		t.Fatalf("decisions (-want +got):\n%s", diff)
	}
	if got := annotations[merge.HandedOverAnnotation]; got != `["metadata.annotations.team","metadata.labels.tier"]` {
		t.Errorf("record %q, want the annotation team and the label tier", got)
	}
}

// admitRecord admits u with the bundled rules and returns its decisions,
// each as "rule action paths", and the annotations of the object the
// mutating pass patched; it fails the test when nothing was patched.
func admitRecord(t *testing.T, u Update) ([]string, map[string]string) {
	t.Helper()
	r := NewReviewer(nil, engine(t, policy.Config{}), cluster{})
	a, err := r.Admit(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range a.Decisions() {
		got = append(got, string(d.Rule)+" "+string(d.Action)+" "+strings.Join(d.Paths, ","))
	}
	if a.Patched == nil {
		t.Fatalf("nothing patched; decisions %q", got)
	}
	patched := &unstructured.Unstructured{}
	if err := patched.UnmarshalJSON(a.Patched); err != nil {
		t.Fatal(err)
	}
	return got, patched.GetAnnotations()
}
