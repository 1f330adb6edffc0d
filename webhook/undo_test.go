package webhook

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// An undo whose template matches no revision exactly is allowed with a
// warning, never denied nor repaired; a write that does not look like an
// undo is judged as any other. The reviews are the captured undos, changed
// as another webhook, an older server or another client would have.
func TestUndoThatMatchesNoRevision(t *testing.T) {
	tests := map[string]struct {
		review string
		// object changes the request's object; cluster the snapshot.
		object  func(obj map[string]any)
		cluster func(c *fakeCluster)
		// classification and denied ("" when allowed) as in
		// TestHandlersOnCapturedReviews; warning is the exact validating
		// warning, "" for none.
		classification policy.Classification
		denied         string
		warning        string
	}{
		"a Deployment undo whose template another webhook stamped warns": {
			review: "deployment-rollout-undo", object: stamp,
			classification: policy.RolloutUndo, warning: unconfirmedWarning("Deployment", "deployment-rollout-undo", "web"),
		},
		"a stamped Deployment undo that also restores the ReplicaSet's annotations warns": {
			review: "deployment-rollout-undo", object: func(obj map[string]any) { stamp(obj); annotate(obj, "example.com/owner", "team-a") },
			classification: policy.RolloutUndo, warning: unconfirmedWarning("Deployment", "deployment-rollout-undo", "web"),
		},
		"a StatefulSet undo whose template another webhook stamped warns": {
			review: "statefulset-rollout-undo", object: stamp,
			classification: policy.RolloutUndo, warning: unconfirmedWarning("StatefulSet", "statefulset-rollout-undo", "my-wonderhoy-app"),
		},
		"an undo to a ControllerRevision written before the server defaulted a field warns": {
			review: "statefulset-rollout-undo", cluster: revisionWithoutDefault(1),
			classification: policy.RolloutUndo, warning: unconfirmedWarning("StatefulSet", "statefulset-rollout-undo", "my-wonderhoy-app"),
		},
		"a client-go Update of the image without field manager is an edit": {
			review: "deployment-set-image", object: renameManager("kubectl-set", "deploy-tool"),
			classification: policy.Imperative, denied: "[imperative-edit] ",
		},
		"a write by kubectl without field manager that also changes replicas is an edit": {
			review: "deployment-rollout-undo", object: func(obj map[string]any) { stamp(obj); obj["spec"].(map[string]any)["replicas"] = 5.0 },
			classification: policy.Imperative, denied: "[imperative-edit] ",
		},
		"a stamped StatefulSet write by kubectl that also changes its annotations is an edit": {
			review: "statefulset-rollout-undo", object: func(obj map[string]any) { stamp(obj); annotate(obj, "example.com/owner", "team-a") },
			classification: policy.Imperative, denied: "[imperative-edit] ",
		},
		"a StatefulSet undo-like write of another client is an edit": {
			review: "statefulset-rollout-undo", object: func(obj map[string]any) { stamp(obj); renameManager("kubectl", "deploy-tool")(obj) },
			classification: policy.Imperative, denied: "[imperative-edit] ",
		},
	}
	engine := newEngine(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := loadReview(t, tc.review)
			if tc.object != nil {
				editObject(t, &req, tc.object)
			}
			cluster := loadCluster(t, filepath.Join("testdata", "reviews", tc.review+".cluster.json"))
			if tc.cluster != nil {
				tc.cluster(cluster)
			}
			r := NewReviewer(engine, cluster)
			rv, err := r.core.Review(t.Context(), &req.AdmissionRequest, review.Validate)
			if err != nil {
				t.Fatalf("review: %v", err)
			}
			if got := rv.Classification(); got != tc.classification {
				t.Errorf("classification = %q, want %q", got, tc.classification)
			}
			validating := r.Validating().Handle(t.Context(), req)
			gotDenied := ""
			if !validating.Allowed {
				gotDenied = strings.SplitN(validating.Result.Message, "\n", 2)[0]
			}
			if tc.denied == "" && gotDenied != "" || !strings.HasPrefix(gotDenied, tc.denied) {
				t.Errorf("validating denial = %q, want it to start with %q", gotDenied, tc.denied)
			}
			if tc.warning != "" {
				if diff := cmp.Diff([]string{tc.warning}, validating.Warnings); diff != "" {
					t.Errorf("validating warnings (-want +got):\n%s", diff)
				}
			}
			mutating := r.Mutating().Handle(t.Context(), req)
			if !mutating.Allowed || len(mutating.Patches) > 0 || len(mutating.Warnings) > 0 {
				t.Errorf("mutating: allowed %v, patches %v, warnings %q; want allowed, no patch, no warning", mutating.Allowed, mutating.Patches, mutating.Warnings)
			}
		})
	}
}

func unconfirmedWarning(kind, namespace, name string) string {
	return "[stale-last-applied] " + kind + " " + namespace + "/" + name + ": this write looks like a rollout undo, but its pod template " +
		"matches none of the revisions exactly (another mutating webhook may have changed it, the revision predates a default " +
		"the server now adds, an older kubectl dropped template fields it does not know, or a tool restored only the revision's pod spec), so apply-hygiene left last-applied as it was. It may still describe the newer manifest; then the " +
		"next kubectl apply will not delete what the restored template has and your manifest does not. See where live differs " +
		"from last-applied with: kubectl hygiene explain " + strings.ToLower(kind) + "s.apps/" + name + " -n " + namespace
}

// stamp adds a pod-template annotation, as a mutating webhook that stamps
// every change of the template would.
func stamp(obj map[string]any) {
	meta := obj["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann["example.com/stamped-at"] = "3"
	meta["annotations"] = ann
}

// annotate sets an annotation of the object itself: kubectl's undo of a
// Deployment restores them from the ReplicaSet, of a StatefulSet never.
func annotate(obj map[string]any, key, value string) {
	meta := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[key] = value
	meta["annotations"] = ann
}

// renameManager makes the managedFields entry of manager another
// client's, as if that client had written the same change.
func renameManager(from, to string) func(obj map[string]any) {
	return func(obj map[string]any) {
		for _, e := range obj["metadata"].(map[string]any)["managedFields"].([]any) {
			if e := e.(map[string]any); e["manager"] == from {
				e["manager"] = to
			}
		}
	}
}

// revisionWithoutDefault drops terminationMessagePolicy from the containers
// of ControllerRevision number n, as a server that did not default the
// field yet would have written it.
func revisionWithoutDefault(n int64) func(c *fakeCluster) {
	return func(c *fakeCluster) {
		for _, o := range c.objects {
			if rev, _, _ := unstructured.NestedInt64(o.Object, "revision"); o.GetKind() != "ControllerRevision" || rev != n {
				continue
			}
			spec := o.Object["data"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			for _, ctr := range spec["containers"].([]any) {
				delete(ctr.(map[string]any), "terminationMessagePolicy")
			}
		}
	}
}

// editObject changes the request's object and drops options.fieldManager,
// which only the captured kubectl set sent.
func editObject(t *testing.T, req *admission.Request, edit func(obj map[string]any)) {
	t.Helper()
	editRequestObject(t, req, edit)
	req.Options.Raw = []byte(`{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1"}`)
}
