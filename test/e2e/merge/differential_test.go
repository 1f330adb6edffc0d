package merge_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/retry"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// scenario is one row of the differential test.
type scenario struct {
	// dir is testdata/<dir>: numbered manifests and an optional steps.yaml.
	dir string
	// defaulted lists, per manifest, the fields that the server stored
	// after that apply and merge's prediction lacks: the server's defaults
	// for fields that the apply removed or added without them. Nothing
	// else may differ.
	defaulted map[string][]string
	// rejected is what kubectl prints when the server rejects the last
	// apply; the prediction must then be rejected the same way.
	rejected string
	// strategy is the patch type; strategic merge patch when empty.
	strategy merge.Strategy
	// The facts of the last apply, each "path by owner, owner" (reverts
	// and orphans) or "path" (defaulted dependents, with " (rejected)"
	// when the server rejects the object).
	orphans, reverts, dependents []string
	// replicasReset is set when the last apply drops replicas.
	replicasReset bool
}

// check is what one apply onto an existing object gave.
type check struct {
	res *merge.ApplyResult
	an  *merge.Analysis
}

func runScenario(t *testing.T, tc scenario) {
	f := framework.New(t)
	k := f.Kubectl
	dir := filepath.Join("testdata", tc.dir)
	s := loadScript(t, dir)
	t.Cleanup(func() {
		for _, args := range s.Cleanup {
			k.Run(t, args...)
		}
	})
	a := merge.NewAnalyzer()
	var last *unstructured.Unstructured
	var final *check
	for i, st := range s.Steps {
		settle(t, f, last)
		switch {
		case st.Apply != "":
			path := filepath.Join(dir, st.Apply)
			want := tc.defaulted[st.Apply]
			rejected := ""
			if i == s.lastApply() {
				rejected = tc.rejected
			}
			final = applyAndCompare(t, k, a, path, want, rejected)
			last = getObject(t, k, path)
		case st.Kubectl != nil:
			kc := k
			if st.Editor != "" {
				kc.Env = append(kc.Env, "EDITOR="+st.Editor)
			}
			kc.Run(t, withPaths(dir, st.Kubectl)...).MustSucceed(t)
		case st.WaitRevisions != nil:
			waitForRevisions(t, f, st.WaitRevisions.Selector, st.WaitRevisions.Count)
		default:
			t.Fatalf("step %d of %s does nothing", i+1, dir)
		}
	}
	if final == nil {
		t.Fatalf("the last apply of %s created its object: nothing was predicted", dir)
	}
	assertFacts(t, tc, final)
}

// withPaths replaces the arguments that name a file of dir by its path.
func withPaths(dir string, args []string) []string {
	out := make([]string, len(args))
	for i, arg := range args {
		out[i] = arg
		if strings.HasSuffix(arg, ".yaml") && !strings.Contains(arg, "/") {
			out[i] = filepath.Join(dir, arg)
		}
	}
	return out
}

// applyAndCompare predicts `kubectl apply -f path` from the live object
// read right before it, runs it and compares the prediction with what the
// server stored. An apply that creates its object is not predicted (kubectl
// creates it, there is no patch) and gives nil.
func applyAndCompare(t *testing.T, k framework.Kubectl, a *merge.Analyzer, path string, defaulted []string, rejected string) *check {
	t.Helper()
	live := getObject(t, k, path)
	if live == nil {
		k.Run(t, "apply", "-f", path).MustSucceed(t)
		return nil
	}
	manifest := readManifest(t, path)
	if ns := live.GetNamespace(); ns != "" {
		manifest.SetNamespace(ns) // as kubectl does for -n
	}
	res, err := a.ApplyManifest(manifest, live)
	if err != nil {
		t.Fatalf("predicting apply of %s: %v", path, err)
	}
	an, err := a.AnalyzeClientSideApply(live, res.Result)
	if err != nil {
		t.Fatalf("analyzing the predicted apply of %s: %v", path, err)
	}
	out := k.Run(t, "apply", "-f", path)
	stored := getObject(t, k, path)
	if rejected != "" {
		out.MustFail(t)
		if got := strings.TrimSpace(out.Stderr); got != rejected {
			t.Errorf("kubectl apply -f %s printed %q, want %q", path, got, rejected)
		}
		if diff := diffObjects(live, stored); diff != "" {
			t.Errorf("the rejected apply of %s changed the object (-before +after):\n%s", path, diff)
		}
		// kubectl words an Invalid error as "The Kind "name" is invalid: …";
		// the causes after "is invalid: " are the server's own.
		_, err := dryRunReplace(t, res.Result)
		_, wantCauses, _ := strings.Cut(rejected, " is invalid: ")
		if _, gotCauses, _ := strings.Cut(fmt.Sprint(err), " is invalid: "); !apierrors.IsInvalid(err) || gotCauses != wantCauses {
			t.Errorf("the server rejects the prediction of %s with %v, want kubectl apply's %q", path, err, rejected)
		}
		return &check{res: res, an: an}
	}
	out.MustSucceed(t)
	comparePrediction(t, path, res.Result, stored, defaulted)
	return &check{res: res, an: an}
}

// comparePrediction checks that the server stored the predicted object:
// field by field, every predicted value is stored and the stored object
// only adds the listed server defaults; and whole, order of lists
// included, the prediction as the server defaults it (a server-side dry-run
// replace) is the stored object.
func comparePrediction(t *testing.T, path string, predicted, stored *unstructured.Unstructured, defaulted []string) {
	t.Helper()
	added, removed, modified := fieldDiff(t, comparable(predicted), comparable(stored))
	if len(removed)+len(modified) > 0 {
		t.Errorf("apply of %s: the server stored other values than merge predicted:\nabsent from the server: %q\ndifferent on the server: %q\n(-predicted +stored):\n%s",
			path, removed, modified, diffObjects(predicted, stored))
	}
	if diff := cmp.Diff(defaulted, added); diff != "" {
		t.Errorf("apply of %s: fields the server added to the prediction (-want +got):\n%s", path, diff)
	}
	dry, err := dryRunReplace(t, predicted)
	if err != nil {
		t.Fatalf("apply of %s: the server rejects the prediction: %v", path, err)
	}
	if diff := diffObjects(dry, stored); diff != "" {
		t.Errorf("apply of %s: the prediction as the server stores it differs from what kubectl apply stored (-predicted +stored):\n%s", path, diff)
	}
}

// dryRunReplace sends obj to the server as a server-side dry-run update
// (a PUT, which `kubectl replace` would also send but with its own
// last-applied): the server defaults and validates it exactly as the object
// that the apply's patch produced, and stores nothing. managedFields are
// left out, they would be written as sent; resourceVersion is the current
// one (custom resources allow no unconditional update).
func dryRunReplace(t *testing.T, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	body := obj.DeepCopy()
	unstructured.RemoveNestedField(body.Object, "metadata", "managedFields")
	cfg, err := framework.ControlPlane(t).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	gvk := body.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("mapping %s: %v", gvk, err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ri dynamic.ResourceInterface = client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = client.Resource(mapping.Resource).Namespace(body.GetNamespace())
	}
	var out *unstructured.Unstructured
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		// A controller may have written the object since the apply (the
		// Deployment controller's revision annotation).
		current, err := ri.Get(t.Context(), body.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		body.SetResourceVersion(current.GetResourceVersion())
		out, err = ri.Update(t.Context(), body, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	return out, err
}

func assertFacts(t *testing.T, tc scenario, c *check) {
	t.Helper()
	want := tc.strategy
	if want == "" {
		want = merge.StrategicMergePatch
	}
	if c.res.Strategy != want {
		t.Errorf("strategy = %q, want %q", c.res.Strategy, want)
	}
	if diff := cmp.Diff(tc.orphans, owned(c.an.Orphans)); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tc.reverts, owned(c.an.Reverts)); diff != "" {
		t.Errorf("reverts (-want +got):\n%s", diff)
	}
	var deps []string
	for _, d := range c.an.DefaultedDependents {
		s := d.Path.String()
		if d.Rejected {
			s += " (rejected)"
		}
		deps = append(deps, s)
	}
	if diff := cmp.Diff(tc.dependents, deps); diff != "" {
		t.Errorf("defaulted dependents (-want +got):\n%s", diff)
	}
	if got := c.an.ReplicasReset != nil; got != tc.replicasReset {
		t.Errorf("replicas reset = %v, want %v", got, tc.replicasReset)
	}
}

// owned renders facts as "path by owner, owner", the owners sorted by
// name: merge orders them newest first, and managedFields times have a
// resolution of one second, so two writes of one test often tie.
func owned(facts []merge.FieldFact) []string {
	var out []string
	for _, f := range facts {
		var ows []string
		for _, o := range f.Owners {
			ows = append(ows, o.Manager)
		}
		slices.Sort(ows)
		out = append(out, f.Path.String()+" by "+strings.Join(ows, ", "))
	}
	return out
}
