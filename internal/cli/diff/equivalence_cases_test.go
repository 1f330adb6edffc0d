package diff

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// reviewsDir holds the captured AdmissionReviews (hack/capture-reviews).
var reviewsDir = filepath.Join("..", "..", "..", "webhook", "testdata", "reviews")

// TestEquivalenceCapturedReviews runs every captured review through the
// webhook and the CLI (see equivalence_test.go for the pairs compared).
func TestEquivalenceCapturedReviews(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(reviewsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	paths = slices.DeleteFunc(paths, func(p string) bool { return strings.HasSuffix(p, ".cluster.json") })
	if len(paths) < 20 {
		t.Fatalf("found %d captured reviews in %s", len(paths), reviewsDir)
	}
	compared := map[string]int{}
	for setupName, setup := range engineSetups() {
		s := newSides(t, setup)
		for _, path := range paths {
			name := strings.TrimSuffix(filepath.Base(path), ".json")
			t.Run(setupName+"/"+name, func(t *testing.T) {
				req, objects := loadReview(t, path)
				in, decisions := s.review(t, req, objects)
				switch {
				case req.Operation == admissionv1.Create:
					compareCreate(t, req)
					compared["create"]++
				case in == nil:
					// A controller's write: nothing to compare.
				case in.Classification == policy.ClientSideApply:
					newObj := decode(t, req.Object.Raw)
					_, got := s.cliDiff(t, lastAppliedOf(t, newObj), decode(t, req.OldObject.Raw), userOf(req))
					compareDecisions(t, decisions, got)
					compared["apply"]++
				case (in.Classification == policy.Imperative || in.Classification == policy.Scale) && rewritesLastApplied(t, req):
					// kubectl edit rewrites last-applied along with the
					// field: the stored object shows no drift to explain.
					compared["edit rewriting last-applied"]++
				case in.Classification == policy.Imperative || in.Classification == policy.Scale:
					compareDrift(t, decisions, s.cliExplain(t, written(t, req, objects)))
					compared["imperative"]++
				}
			})
		}
	}
	t.Logf("compared: %v", compared)
	if compared["apply"] < 4 || compared["imperative"] < 8 {
		t.Errorf("compared too few reviews: %v", compared)
	}
}

// written is the object as a write leaves it: the request's object, or
// for /scale the parent with the new replicas.
func written(t *testing.T, req *admissionv1.AdmissionRequest, objects []*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	if req.SubResource != "scale" {
		return decode(t, req.Object.Raw)
	}
	scale := decode(t, req.Object.Raw)
	replicas, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas")
	for _, o := range objects {
		if o.GetKind() == req.Kind.Kind || (o.GetName() == req.Name && o.GetNamespace() == req.Namespace && o.GetKind() != "ReplicaSet" && o.GetKind() != "ControllerRevision" && o.GetKind() != "Pod") {
			obj := o.DeepCopy()
			if err := unstructured.SetNestedField(obj.Object, replicas, "spec", "replicas"); err != nil {
				t.Fatal(err)
			}
			return obj
		}
	}
	t.Fatalf("no parent of the scale request in the snapshot")
	return nil
}

// compareCreate checks that diff predicts a creation with no findings,
// as the webhook reviews no CREATE.
func compareCreate(t *testing.T, req *admissionv1.AdmissionRequest) {
	t.Helper()
	o := &Options{analyzer: func() *merge.Analyzer { return analyzer }}
	item, err := o.diffOne(decode(t, req.Object.Raw), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !item.Created || item.live != nil {
		t.Errorf("diff of a created object: created=%v, reviewed an update of %v", item.Created, item.live)
	}
}

// compareDecisions asserts identical rule, action, message and paths.
func compareDecisions(t *testing.T, server []policy.Decision, cli []judge.Finding) {
	t.Helper()
	ref := merge.ObjectRef{}
	if len(cli) > 0 {
		ref = cli[0].Object
	}
	if diff := cmp.Diff(judge.FindingsOf(server, ref), cli); diff != "" {
		t.Errorf("the webhook's decisions and diff's findings differ (-webhook +diff):\n%s", diff)
	}
}

// compareDrift asserts that every field the webhook calls an imperative
// edit is drift that explain reports on the object as written.
func compareDrift(t *testing.T, server []policy.Decision, cli []judge.Finding) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range cli {
		if f.Rule == policy.RuleImperativeEdit || f.Rule == policy.RuleApplyRevertsDrift {
			seen[f.Path] = true
		}
	}
	for _, d := range server {
		if d.Rule != policy.RuleImperativeEdit {
			continue
		}
		for _, p := range d.Paths {
			if !seen[p] {
				t.Errorf("the webhook finds an imperative edit of %s; explain of the written object does not (explain: %+v)", p, cli)
			}
		}
	}
}

// rewritesLastApplied reports whether an imperative write changes
// last-applied too, as kubectl edit does.
func rewritesLastApplied(t *testing.T, req *admissionv1.AdmissionRequest) bool {
	t.Helper()
	if req.SubResource == "scale" {
		return false
	}
	la := func(raw []byte) string { return decode(t, raw).GetAnnotations()[merge.LastAppliedAnnotation] }
	return la(req.Object.Raw) != la(req.OldObject.Raw)
}

// mergeFixtures holds merge's three-way cases: original (last-applied),
// modified (the manifest) and live.
var mergeFixtures = filepath.Join("..", "..", "..", "merge", "testdata")

// TestEquivalenceMergeFixtures predicts each merge case's apply with diff,
// sends the apply that kubectl would send (old = live, new = the merged
// result, both as the API server decodes them: diff's UPDATE; field
// manager kubectl-client-side-apply, a person in system:masters) to the
// webhook, and asserts identical decisions for
// every case, those the review core classifies as save-config (an apply
// that changes nothing but last-applied) included.
func TestEquivalenceMergeFixtures(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(mergeFixtures, "*", "modified.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 30 {
		t.Fatalf("found %d merge cases in %s", len(dirs), mergeFixtures)
	}
	user := policy.User{Username: "kubernetes-admin", Groups: []string{"kubeadm:cluster-admins", "system:authenticated"}}
	decided, classes := 0, map[policy.Classification]int{}
	for setupName, setup := range engineSetups() {
		s := newSides(t, setup)
		for _, manifestPath := range dirs {
			dir := filepath.Dir(manifestPath)
			t.Run(setupName+"/"+filepath.Base(dir), func(t *testing.T) {
				live := readYAML(t, filepath.Join(dir, "live.yaml"))
				withOriginal(t, live, filepath.Join(dir, "original.yaml"))
				item, got := s.cliDiff(t, readYAML(t, manifestPath), live, user)
				if item.Result == nil {
					t.Fatal("diff computed no result for a fixture whose apply kubectl computes")
				}
				if item.live == nil {
					// An empty patch: kubectl sends nothing.
					if len(got) > 0 {
						t.Errorf("diff predicts findings for an apply that sends nothing: %+v", got)
					}
					classes["unchanged: no request"]++
					return
				}
				req := applyRequest(t, item.live, item.written, user)
				in, decisions := s.review(t, req, nil)
				compareDecisions(t, decisions, got)
				decided += len(decisions)
				if in != nil {
					classes[in.Classification]++
				}
			})
		}
	}
	t.Logf("compared %d decisions; the webhook classified the applies as %v", decided, classes)
	if decided == 0 {
		t.Error("no merge case made any decision: the comparison compared nothing")
	}
}

// withOriginal sets live's last-applied to original.yaml, as merge's
// fixture loader does, when live has none and the case has an original.
func withOriginal(t *testing.T, live *unstructured.Unstructured, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil || live.GetAnnotations()[merge.LastAppliedAnnotation] != "" {
		return
	}
	la, err := merge.ModifiedConfiguration(readYAML(t, path))
	if err != nil {
		t.Fatal(err)
	}
	ann := live.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[merge.LastAppliedAnnotation] = string(la)
	live.SetAnnotations(ann)
}

func readYAML(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	objs, err := cli.ReadObjects(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("%s: %d objects, want 1", path, len(objs))
	}
	return objs[0]
}

// applyRequest is the UPDATE that kubectl apply sends to turn old into
// new, as the API server hands it to admission.
func applyRequest(t *testing.T, old, new *unstructured.Unstructured, user policy.User) *admissionv1.AdmissionRequest {
	t.Helper()
	oldRaw, err := old.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	newRaw, err := new.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	gvk := new.GroupVersionKind()
	return &admissionv1.AdmissionRequest{
		UID:       "equivalence",
		Kind:      metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Resource:  metav1.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: strings.ToLower(gvk.Kind) + "s"},
		Name:      new.GetName(),
		Namespace: new.GetNamespace(),
		Operation: admissionv1.Update,
		UserInfo:  authenticationv1.UserInfo{Username: user.Username, Groups: user.Groups},
		Object:    runtime.RawExtension{Raw: newRaw},
		OldObject: runtime.RawExtension{Raw: oldRaw},
		Options:   runtime.RawExtension{Raw: []byte(`{"kind":"PatchOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"` + merge.ClientSideApplyManager + `"}`)},
		DryRun:    ptr.To(false),
	}
}
