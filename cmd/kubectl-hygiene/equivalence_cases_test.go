package main

import (
	"encoding/json"
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

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// reviewsDir holds the captured AdmissionReviews (hack/capture-reviews).
var reviewsDir = filepath.Join("..", "..", "webhook", "testdata", "reviews")

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
	o := &DiffOptions{analyzer: func() *merge.Analyzer { return analyzer }}
	item, err := o.diffOne(decode(t, req.Object.Raw), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !item.Created || item.analysis != nil {
		t.Errorf("diff of a created object: created=%v, analysis=%v", item.Created, item.analysis)
	}
}

// compareDecisions asserts identical rule, action, message and paths.
func compareDecisions(t *testing.T, server []policy.Decision, cli []Finding) {
	t.Helper()
	ref := merge.ObjectRef{}
	if len(cli) > 0 {
		ref = cli[0].Object
	}
	if diff := cmp.Diff(findingsOf(server, ref), cli); diff != "" {
		t.Errorf("the webhook's decisions and diff's findings differ (-webhook +diff):\n%s", diff)
	}
}

// compareDrift asserts that every field the webhook calls an imperative
// edit is drift that explain reports on the object as written.
func compareDrift(t *testing.T, server []policy.Decision, cli []Finding) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range cli {
		if f.Rule == string(policy.RuleImperativeEdit) || f.Rule == string(policy.RuleApplyRevertsDrift) {
			seen[f.Path] = true
		}
	}
	for _, d := range server {
		if d.Rule != string(policy.RuleImperativeEdit) {
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
var mergeFixtures = filepath.Join("..", "..", "merge", "testdata")

// onlyLastAppliedChanges are the merge cases whose apply changes nothing
// but last-applied. The webhook classifies such a write as save-config
// (the hand-over of kubectl apply set-last-applied, webhook/classify.go)
// and decides nothing, while diff judges it as the client-side apply it
// is (orphans, missing last-applied). A known difference, left until the
// classification moves below the webhook where the CLI can share it.
var onlyLastAppliedChanges = []string{
	"seed000-map-keep-key",
	"seed000-primitive-keep",
	"seed001-containers-keep",
	"seed001-primitive-list-in-both",
	"seed001-primitive-list-keep",
	"seed002-missing-last-applied",
}

// TestEquivalenceMergeFixtures predicts each merge case's apply with diff,
// sends the apply that kubectl would send (old = live, new = the merged
// result, field manager kubectl-client-side-apply, a person in
// system:masters) to the webhook, and asserts identical decisions.
func TestEquivalenceMergeFixtures(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(mergeFixtures, "*", "modified.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 30 {
		t.Fatalf("found %d merge cases in %s", len(dirs), mergeFixtures)
	}
	user := policy.User{Username: "kubernetes-admin", Groups: []string{"kubeadm:cluster-admins", "system:authenticated"}}
	decided := 0
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
				req := applyRequest(t, live, item.Result, user)
				in, decisions := s.review(t, req, nil)
				known := slices.Contains(onlyLastAppliedChanges, filepath.Base(dir))
				if in != nil && in.Classification == policy.SaveConfig {
					if !known {
						t.Errorf("the webhook takes the apply for %s; diff predicts a client-side apply", in.Classification)
					}
					return
				}
				if known {
					t.Errorf("the webhook now takes the apply for %v: drop the case from onlyLastAppliedChanges", in)
				}
				compareDecisions(t, decisions, got)
				decided += len(decisions)
			})
		}
	}
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
	objs, err := readObjects(path, nil)
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
		Options:   runtime.RawExtension{Raw: []byte(`{"kind":"PatchOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"` + applyFieldManager + `"}`)},
		DryRun:    ptr.To(false),
	}
}

// policyFixtures holds policy inputs written by hand from the seeds.
var policyFixtures = filepath.Join("..", "..", "policy", "testdata")

// TestEquivalencePolicyFixtures: policy/testdata holds policy inputs, the
// webhook's side of the engine already. For each client-side apply among
// them, the input that diff builds from the same analysis, user and
// namespace must decide exactly as the fixture does; the other
// classifications are no apply that diff predicts (see
// equivalence_test.go).
func TestEquivalencePolicyFixtures(t *testing.T) {
	inputs := clientSideApplyInputs(t)
	if len(inputs) < 5 {
		t.Fatalf("found %d client-side applies in policy/testdata", len(inputs))
	}
	for setupName, setup := range engineSetups() {
		s := newSides(t, setup)
		for name, in := range inputs {
			t.Run(setupName+"/"+name, func(t *testing.T) {
				in.Namespace.Labels = s.namespaceLabels(in.Namespace.Name)
				want, err := s.server.Evaluate(t.Context(), &in)
				if err != nil {
					t.Fatal(err)
				}
				s.cli.user = in.Request.User
				got, err := s.cli.findings(t.Context(), s.cli.applyInput(t.Context(), in.Analysis))
				if err != nil {
					t.Fatal(err)
				}
				compareDecisions(t, want, got)
			})
		}
	}
}

// clientSideApplyInputs reads the policy inputs of policy/testdata that
// are client-side applies with an analysis, by fixture name: the others
// are no apply that diff predicts.
func clientSideApplyInputs(t *testing.T) map[string]policy.Input {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(policyFixtures, "*", "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]policy.Input{}
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var in policy.Input
		if err := json.Unmarshal(raw, &in); err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
		if in.Classification == policy.ClientSideApply && in.Analysis != nil {
			out[filepath.Base(filepath.Dir(path))] = in
		}
	}
	return out
}
