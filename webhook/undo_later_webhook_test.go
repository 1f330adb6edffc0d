package webhook

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// An undo that apply-hygiene's mutating webhook repaired stays an undo
// when a mutating webhook called after it (its configuration's name sorts
// after apply-hygiene's, as a policy engine's does) changes the restored
// pod template: here it adds a label to every pod template, as a policy
// installed after the restored revision was made does. The validating
// webhook then sees a template that matches no revision and last-applied
// changed, by apply-hygiene's own repair, not by the writer: it must not
// judge the undo as a client-side apply of the repaired last-applied
// (which warned "[apply-reverts-drift] … this apply sets … back" about
// the image the undo replaced, a denial where that rule denies).
func TestUndoRepairedBeforeALaterWebhookChangedTheTemplate(t *testing.T) {
	tests := map[string]struct {
		review string
		// before changes the request's old object and the cluster
		// snapshot to an earlier history; nil keeps the capture's.
		before func(t *testing.T, req *admission.Request, c *fakeCluster)
	}{
		"a DaemonSet undo":   {review: "daemonset-rollout-undo"},
		"a StatefulSet undo": {review: "statefulset-rollout-undo"},
		"a Deployment undo":  {review: "deployment-rollout-undo"},
		"a DaemonSet undo --to-revision=1 of the image that kubectl set image changed": {
			review: "daemonset-rollout-undo", before: setImageBeforeUndo,
		},
	}
	engine := newEngine(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := loadReview(t, tc.review)
			cluster := loadCluster(t, filepath.Join("testdata", "reviews", tc.review+".cluster.json"))
			if tc.before != nil {
				tc.before(t, &req, cluster)
			}
			r := NewReviewer(engine, cluster)
			mutating := r.Mutating().Handle(t.Context(), req)
			if !mutating.Allowed || len(mutating.Patches) != 1 || mutating.Patches[0].Path != lastAppliedPointer {
				t.Fatalf("mutating: allowed %v, patches %v; want the repair of last-applied (the premise of this test)", mutating.Allowed, mutating.Patches)
			}
			repaired := patchValue(t, mutating.Patches[0])
			editRequestObject(t, &req, func(obj map[string]any) {
				meta := obj["metadata"].(map[string]any)
				annotations := meta["annotations"].(map[string]any)
				annotations[lastAppliedAnnotation] = repaired
				// What the API server sets between the two passes
				// (the registry's PrepareForUpdate): the generation, and
				// a DaemonSet's template generation.
				meta["generation"] = meta["generation"].(float64) + 1
				if g, ok := annotations[daemonSetGeneration].(string); ok {
					n, err := strconv.Atoi(g)
					if err != nil {
						t.Fatal(err)
					}
					annotations[daemonSetGeneration] = strconv.Itoa(n + 1)
				}
				labels := obj["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
				labels["policy.example.com/team"] = "web"
			})
			rv, err := r.core.Review(t.Context(), &req.AdmissionRequest, review.Validate)
			if err != nil {
				t.Fatalf("review: %v", err)
			}
			if diff := cmp.Diff(policy.RolloutUndo, rv.Classification()); diff != "" {
				t.Errorf("classification (-want +got):\n%s", diff)
			}
			validating := r.Validating().Handle(t.Context(), req)
			if !validating.Allowed || len(validating.Warnings) > 0 {
				t.Errorf("validating: allowed %v, warnings %q; want allowed without a warning (the mutating webhook's repair said it all)", validating.Allowed, validating.Warnings)
			}
		})
	}
}

// setImageBeforeUndo makes the captured DaemonSet undo one that follows a
// `kubectl set image daemonset/agent agent=agent:3` after the apply of
// agent:2: the old object has that image, owned by kubectl-set's entry
// alone, and the template generation the set image gave it; the cluster
// has the ControllerRevision the set image made (revision 3, with the
// DaemonSet's annotations of then). The undo's object stays the
// capture's: it restores revision 1, and kubectl-set's entry, left with no
// field, is gone from it.
func setImageBeforeUndo(t *testing.T, req *admission.Request, c *fakeCluster) {
	t.Helper()
	var old map[string]any
	if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
		t.Fatal(err)
	}
	meta := old["metadata"].(map[string]any)
	meta["generation"] = 3.0
	meta["annotations"].(map[string]any)[daemonSetGeneration] = "3"
	container := old["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	container["image"] = "agent:3"
	entries := meta["managedFields"].([]any)
	for _, e := range entries {
		e := e.(map[string]any)
		if e["manager"] != "kubectl-client-side-apply" {
			continue
		}
		fields := e["fieldsV1"].(map[string]any)["f:spec"].(map[string]any)["f:template"].(map[string]any)["f:spec"].(map[string]any)
		delete(fields["f:containers"].(map[string]any)[`k:{"name":"agent"}`].(map[string]any), "f:image")
	}
	meta["managedFields"] = append(entries, map[string]any{
		"manager": "kubectl-set", "operation": "Update", "apiVersion": "apps/v1", "time": "2026-11-22T02:19:44Z", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{
			`k:{"name":"agent"}`: map[string]any{"f:image": map[string]any{}},
		}}}}},
	})
	raw, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	req.OldObject.Raw, req.OldObject.Object = raw, nil
	for _, o := range c.objects {
		if rev, _, _ := unstructured.NestedInt64(o.Object, "revision"); o.GetKind() != "ControllerRevision" || rev != 2 {
			continue
		}
		set := o.DeepCopy()
		set.SetName("agent-5d8f7b6c94")
		set.SetResourceVersion("")
		set.SetUID("")
		set.SetLabels(map[string]string{"app": "agent", "controller-revision-hash": "5d8f7b6c94"})
		ann := set.GetAnnotations()
		ann[daemonSetGeneration] = "3"
		set.SetAnnotations(ann)
		set.Object["revision"] = int64(3)
		containers, _, _ := unstructured.NestedSlice(set.Object, "data", "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["image"] = "agent:3"
		if err := unstructured.SetNestedSlice(set.Object, containers, "data", "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
		c.objects = append(c.objects, set)
		return
	}
	t.Fatal("no ControllerRevision 2 in the snapshot")
}

// daemonSetGeneration is the annotation the API server bumps on a
// DaemonSet whose pod template a write changes.
const daemonSetGeneration = "deprecated.daemonset.template.generation"

// editRequestObject changes the request's object, keeping its options.
func editRequestObject(t *testing.T, req *admission.Request, edit func(obj map[string]any)) {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		t.Fatal(err)
	}
	edit(obj)
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	req.Object.Raw, req.Object.Object = raw, nil
}
