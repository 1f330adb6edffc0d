package merge

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

func readObjects(t *testing.T, dir, name string) []*unstructured.Unstructured {
	t.Helper()
	data, err := testdata.ReadFile("testdata/" + dir + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range splitYAML(t, data) {
		if obj := mustYAML(t, doc); len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
	return out
}

func splitYAML(t *testing.T, data []byte) [][]byte {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufioReader(data))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if err != nil {
			return docs
		}
		if len(doc) > 0 && string(doc) != "\n" {
			docs = append(docs, doc)
		}
	}
}

func decodeLA(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decoding repaired last-applied: %v", err)
	}
	return m
}

func TestDetectRollback(t *testing.T) {
	v1 := readObject(t, "seed004-undo", "v1.yaml")
	v1LA, _ := LastAppliedValue(v1)
	withoutAnnotations := func(revs []*unstructured.Unstructured) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, r := range revs {
			r = r.DeepCopy()
			r.SetAnnotations(nil)
			out = append(out, r)
		}
		return out
	}
	revs := readObjects(t, "seed004-undo", "revisions.yaml")
	// A ControllerRevision copies the object's annotations when it is
	// made: one without last-applied was made by no client-side apply, so
	// the values the undo restores from it are no manifest's, and the
	// repair proves nothing (TO_BE_DELETED, which the undo adds, neither).
	beforeUndo := decodeLA(t, readObject(t, "seed004-undo", "before-undo.yaml").GetAnnotations()[LastAppliedAnnotation])
	tests := map[string]struct {
		revisions    []*unstructured.Unstructured
		wantNil      bool
		wantSource   string
		wantRevision int64
		wantLA       map[string]any
		wantFresh    bool
	}{
		"the undo restores revision 1 and its ControllerRevision holds v1's last-applied": {
			revisions: revs, wantSource: "controllerRevision", wantRevision: 1, wantLA: decodeLA(t, v1LA),
		},
		"a revision without annotations proves no restored value": {
			revisions: withoutAnnotations(revs), wantSource: "rebuilt", wantRevision: 1, wantLA: beforeUndo, wantFresh: true,
		},
		"a template that matches no revision is not an undo": {
			revisions: revs[1:], wantNil: true,
		},
		"a revision written before the server defaulted a field that the restored template now has is no proven match": {
			revisions: withoutDefault(t, revs), wantNil: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old := readObject(t, "seed004-undo", "before-undo.yaml")
			live := readObject(t, "seed004-undo", "live.yaml")
			rb, err := NewAnalyzer().DetectRollback(old, live, tc.revisions)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantNil {
				if rb != nil {
					t.Fatalf("DetectRollback = %+v, want nil", rb)
				}
				return
			}
			if rb == nil {
				t.Fatal("DetectRollback = nil, want an undo")
			}
			if rb.RepairSource != tc.wantSource || rb.Revision != tc.wantRevision || rb.StaleLastApplied == tc.wantFresh || !rb.Confirmed {
				t.Errorf("source %q revision %d stale %v confirmed %v, want %q %d %v true", rb.RepairSource, rb.Revision, rb.StaleLastApplied, rb.Confirmed, tc.wantSource, tc.wantRevision, !tc.wantFresh)
			}
			if diff := cmp.Diff(tc.wantLA, decodeLA(t, rb.RepairedLastApplied)); diff != "" {
				t.Errorf("repaired last-applied (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", "spec.template.spec.containers[name=nginx].image"}, paths(rb.Changes)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

// withoutDefault returns revs with revision 1 as a server older than the
// live one wrote it: without terminationMessagePolicy, which the API server
// now defaults in every template it stores, so the template that the undo
// restores has the field and the revision does not.
func withoutDefault(t *testing.T, revs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	out := make([]*unstructured.Unstructured, 0, len(revs))
	for _, r := range revs {
		r = r.DeepCopy()
		if rev, _ := revisionOf(r); rev.number == 1 {
			containers, _, _ := unstructured.NestedSlice(r.Object, "data", "spec", "template", "spec", "containers")
			delete(containers[0].(map[string]any), "terminationMessagePolicy")
			if err := unstructured.SetNestedSlice(r.Object, containers, "data", "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, r)
	}
	return out
}

// An undo to a revision written before an upgrade added a default matches
// no revision exactly: UnconfirmedRollback describes it without naming a
// revision or repairing anything.
func TestUnconfirmedRollback(t *testing.T) {
	old := readObject(t, "seed004-undo", "before-undo.yaml")
	live := readObject(t, "seed004-undo", "live.yaml")
	a := NewAnalyzer()
	if rb, err := a.DetectRollback(old, live, withoutDefault(t, readObjects(t, "seed004-undo", "revisions.yaml"))); err != nil || rb != nil {
		t.Fatalf("DetectRollback = %+v, %v; want nil", rb, err)
	}
	rb, err := a.UnconfirmedRollback(old, live)
	if err != nil || rb == nil {
		t.Fatalf("UnconfirmedRollback = %v, %v", rb, err)
	}
	want := []string{"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", "spec.template.spec.containers[name=nginx].image"}
	if diff := cmp.Diff(want, paths(rb.Changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if rb.Confirmed || rb.StaleLastApplied || rb.Revision != 0 || rb.RepairedLastApplied != "" || rb.RepairSource != "" {
		t.Errorf("rollback = %+v, want unconfirmed without revision or repair", rb)
	}
	if rb, err := a.UnconfirmedRollback(old, old); err != nil || rb != nil {
		t.Errorf("UnconfirmedRollback of an unchanged template = %+v, %v; want nil", rb, err)
	}
}

// TestRollbackRepairRemovesOrphan checks the whole seed 004 story: with the
// repaired last-applied the v3 apply deletes TO_BE_DELETED.
func TestRollbackRepairRemovesOrphan(t *testing.T) {
	a := NewAnalyzer()
	old := readObject(t, "seed004-undo", "before-undo.yaml")
	live := readObject(t, "seed004-undo", "live.yaml")
	rb, err := a.DetectRollback(old, live, readObjects(t, "seed004-undo", "revisions.yaml"))
	if err != nil || rb == nil {
		t.Fatalf("DetectRollback = %v, %v", rb, err)
	}
	repaired := live.DeepCopy()
	annots := repaired.GetAnnotations()
	annots[LastAppliedAnnotation] = rb.RepairedLastApplied
	repaired.SetAnnotations(annots)
	res, an, err := a.predictApply(repaired, readObject(t, "seed004-undo", "modified.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	env, _, _ := unstructured.NestedSlice(res.Result.Object, "spec", "template", "spec", "containers")
	want := []any{map[string]any{"name": "ANOTHER_ENV", "value": "who cares?"}}
	if diff := cmp.Diff(want, env[0].(map[string]any)["env"]); diff != "" {
		t.Errorf("env after apply (-want +got):\n%s", diff)
	}
	if len(an.Orphans) != 0 {
		t.Errorf("orphans = %v, want none", paths(an.Orphans))
	}
}

// A ReplicaSet's template is restored less its controller's hash label
// and numbered by its controller's annotations: the Deployment
// controller's (kubectl rollout undo) or, for a ReplicaSet whose
// controller is an Argo Rollout, Argo Rollouts' (kubectl argo rollouts
// undo, which sends the template less rollouts-pod-template-hash). A
// Rollout's undo is confirmed but not repaired: its ReplicaSet's template
// also holds what the Rollout controller and the API server added, so no
// restored value is proven a manifest's, and last-applied stays stale.
// So is a custom kind that is named Deployment but is not apps' (its
// controller's ReplicaSets hold what it added): the kind's group decides,
// not its name.
func TestDetectRollbackOfReplicaSets(t *testing.T) {
	tpl := func(image, hashLabel string) map[string]any {
		labels := map[string]any{"app": "web"}
		if hashLabel != "" {
			labels[hashLabel] = "abc"
		}
		return map[string]any{"metadata": map[string]any{"labels": labels},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}}}
	}
	type owner struct{ apiVersion, kind, hashLabel, revision string }
	deployment := owner{"apps/v1", "Deployment", podTemplateHashLabel, "deployment.kubernetes.io/revision"}
	rollout := owner{"argoproj.io/v1alpha1", "Rollout", "rollouts-pod-template-hash", "rollout.argoproj.io/revision"}
	custom := owner{"example.com/v1", "Deployment", podTemplateHashLabel, "deployment.kubernetes.io/revision"}
	object := func(o owner, image string, manifestImage string) *unstructured.Unstructured {
		d := &unstructured.Unstructured{Object: map[string]any{"apiVersion": o.apiVersion, "kind": o.kind,
			"metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec":     map[string]any{"replicas": int64(2), "template": tpl(image, "")}}}
		if o != deployment {
			d.SetUID("u-ro")
		}
		m := &unstructured.Unstructured{Object: map[string]any{"apiVersion": o.apiVersion, "kind": o.kind,
			"metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec":     map[string]any{"template": tpl(manifestImage, "")}}}
		setLastApplied(t, d, m)
		return d
	}
	rs := func(o owner, image, revision string) *unstructured.Unstructured {
		r := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet",
			"metadata": map[string]any{"name": "web-" + revision, "annotations": map[string]any{o.revision: revision}},
			"spec":     map[string]any{"template": tpl(image, o.hashLabel)}}}
		if o != deployment {
			controller := true
			r.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: o.apiVersion, Kind: o.kind, Name: "web", UID: "u-ro", Controller: &controller}})
		}
		return r
	}
	tests := map[string]struct {
		owner owner
		want  *Rollback
	}{
		"kubectl rollout undo of a Deployment to revision 1": {
			owner: deployment,
			want: &Rollback{RevisionKind: "ReplicaSet", RevisionName: "web-1", Revision: 1, Confirmed: true, StaleLastApplied: true, RepairSource: "rebuilt",
				RepairedLastApplied: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"default"},"spec":{"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"web:1","name":"web"}]}}}}` + "\n",
				Changes:             []FieldFact{{Path: mustPath(t, "spec.template.spec.containers[name=web].image"), Live: "web:2", Result: "web:1"}}},
		},
		"kubectl argo rollouts undo of a Rollout to revision 1": {
			owner: rollout,
			want: &Rollback{RevisionKind: "ReplicaSet", RevisionName: "web-1", Revision: 1, Confirmed: true, StaleLastApplied: true,
				Changes: []FieldFact{{Path: mustPath(t, "spec.template.spec.containers"),
					Live: []any{map[string]any{"name": "web", "image": "web:2"}}, Result: []any{map[string]any{"name": "web", "image": "web:1"}}}}},
		},
		"an undo of an example.com Deployment to revision 1": {
			owner: custom,
			want: &Rollback{RevisionKind: "ReplicaSet", RevisionName: "web-1", Revision: 1, Confirmed: true, StaleLastApplied: true,
				Changes: []FieldFact{{Path: mustPath(t, "spec.template.spec.containers"),
					Live: []any{map[string]any{"name": "web", "image": "web:2"}}, Result: []any{map[string]any{"name": "web", "image": "web:1"}}}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, live := object(tc.owner, "web:2", "web:2"), object(tc.owner, "web:1", "web:2")
			revisions := []*unstructured.Unstructured{rs(tc.owner, "web:1", "1"), rs(tc.owner, "web:2", "2")}
			rb, err := NewAnalyzer().DetectRollback(old, live, revisions)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rb, pathString); diff != "" {
				t.Errorf("rollback (-want +got):\n%s", diff)
			}
			if rb, _ := NewAnalyzer().DetectRollback(old, old, nil); rb != nil {
				t.Errorf("an unchanged template is an undo: %+v", rb)
			}
			applied := object(tc.owner, "web:1", "web:1")
			if rb, _ := NewAnalyzer().DetectRollback(old, applied, revisions[:1]); rb != nil {
				t.Errorf("an apply that changed last-applied is an undo: %+v", rb)
			}
		})
	}
}

func mustPath(t *testing.T, s string) Path {
	t.Helper()
	p, err := ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
