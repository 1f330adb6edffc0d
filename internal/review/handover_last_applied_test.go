package review

import (
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
	r := NewReviewer(nil, engine(t, policy.Config{}), cluster{})
	if got := classify(newWrite("", merge.ClientSideApplyManager, authenticationv1.UserInfo{Username: "alice"}, old, new)); got != policy.SaveConfig {
		t.Fatalf("classified %s, want %s", got, policy.SaveConfig)
	}
	a, err := r.Admit(t.Context(), Update{User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new, FieldManager: merge.ClientSideApplyManager})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range a.Decisions() {
		got = append(got, string(d.Rule)+" "+string(d.Action)+" "+strings.Join(d.Paths, ","))
	}
	if diff := cmp.Diff([]string{"orphaned-field repair metadata.annotations[apply-hygiene.io/handed-over]"}, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	patched := &unstructured.Unstructured{}
	if err := patched.UnmarshalJSON(a.Patched); err != nil {
		t.Fatal(err)
	}
	if got := patched.GetAnnotations()[merge.HandedOverAnnotation]; got != `["metadata.annotations.team"]` {
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
		u.SetManagedFields([]metav1.ManagedFieldsEntry{entry("helm", editLastAppliedFields, 10)})
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
