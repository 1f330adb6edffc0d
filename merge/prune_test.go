package merge

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// withoutPruning builds the oracle: the analyses without the shortcuts of
// prune.go, as they were before them. Only tests can set it. Oracles are
// also built without the cache of parsed last-applied.
func withoutPruning() Option {
	return func(o *options) { o.withoutPruning = true }
}

// pathsAsStrings lets cmp compare Paths (whose key values have unexported
// fields) by their kubectl notation, which round-trips.
var pathsAsStrings = cmp.Transformer("path", func(p Path) string { return p.String() })

// pair is one write to analyze: old and new as a webhook sees them.
type pair struct {
	name     string
	old, new *unstructured.Unstructured
}

// differential holds the pruned analyses equal to the oracle's.
type differential struct {
	pruned, oracle *Analyzer
}

func newDifferential() differential {
	return differential{pruned: NewAnalyzer(), oracle: NewAnalyzer(withoutPruning(), WithLastAppliedCacheSize(0))}
}

// check runs every analysis that pruning touches on p with both analyzers
// and reports any difference: facts, their order, values and owners, the
// apply's result and errors.
func (d differential) check(t *testing.T, p pair) {
	t.Helper()
	type answer struct {
		Value any
		Err   string
	}
	run := func(a *Analyzer) map[string]answer {
		out := map[string]answer{}
		put := func(name string, v any, err error) {
			ans := answer{Value: v}
			if err != nil {
				ans.Err = err.Error()
			}
			out[name] = ans
		}
		an, err := a.AnalyzeUpdate(p.old, p.new)
		put("update", an, err)
		an, err = a.AnalyzeUpdate(p.old, withLastAppliedOfObject(p.new, p.old))
		put("update under old last-applied", an, err)
		an, err = a.AnalyzeClientSideApply(p.old, p.new)
		put("client-side apply", an, err)
		ex, err := a.Explain(p.old)
		put("explain old", ex, err)
		ex, err = a.Explain(p.new)
		put("explain new", ex, err)
		if manifest, err := ParseLastApplied(p.new); err == nil {
			res, an, err := a.predictApply(p.old, manifest)
			put("apply", []any{res, an}, err)
		}
		return out
	}
	if diff := cmp.Diff(run(d.oracle), run(d.pruned), pathsAsStrings); diff != "" {
		t.Errorf("%s: pruned analyses differ from the oracle (-oracle +pruned):\n%s", p.name, diff)
	}
}

// withLastAppliedOfObject returns obj with from's last-applied annotation
// (none when from has none), as the webhook judges an edit.
func withLastAppliedOfObject(obj, from *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	annots := out.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	if v, ok := from.GetAnnotations()[LastAppliedAnnotation]; ok {
		annots[LastAppliedAnnotation] = v
	} else {
		delete(annots, LastAppliedAnnotation)
	}
	out.SetAnnotations(annots)
	return out
}

// capturedPairs reads the old and new object of every AdmissionReview in
// dirs (captures of kube-apiserver, the benchmark reviews, the bad-input
// corpus); reviews without both objects are skipped.
func capturedPairs(t *testing.T, dirs ...string) []pair {
	t.Helper()
	var out []pair
	for _, dir := range dirs {
		names, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Fatalf("no reviews in %s", dir)
		}
		for _, name := range names {
			if strings.HasSuffix(name, ".cluster.json") {
				continue
			}
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			var review struct {
				Request struct {
					Object, OldObject json.RawMessage
				}
			}
			if json.Unmarshal(data, &review) != nil {
				continue
			}
			old, new := &unstructured.Unstructured{}, &unstructured.Unstructured{}
			if old.UnmarshalJSON(review.Request.OldObject) != nil || new.UnmarshalJSON(review.Request.Object) != nil {
				continue
			}
			out = append(out, pair{name: name, old: old, new: new})
		}
	}
	return out
}

// fixturePairs turns every merge fixture into writes: live to the apply's
// expected result, and live to the new manifest stored with its
// last-applied.
func fixturePairs(t *testing.T) []pair {
	t.Helper()
	entries, err := testdata.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out []pair
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "fuzz" {
			continue
		}
		f := loadFixture(t, e.Name())
		if f.live == nil || f.modified == nil {
			continue
		}
		stored := f.modified.DeepCopy()
		setLastApplied(t, stored, f.modified)
		out = append(out, pair{name: e.Name() + "/modified", old: f.live, new: stored})
		if f.expected != nil {
			out = append(out, pair{name: e.Name() + "/expected", old: f.live, new: f.expected})
		}
	}
	return out
}

// variants derives writes from p: new with one leaf changed or removed,
// for up to n leaves picked with rng.
func variants(p pair, rng *rand.Rand, n int) []pair {
	var leaves [][]any
	collectLeaves(p.new.Object, nil, &leaves)
	rng.Shuffle(len(leaves), func(i, j int) { leaves[i], leaves[j] = leaves[j], leaves[i] })
	var out []pair
	for i, steps := range leaves {
		if i == n {
			break
		}
		for _, remove := range []bool{false, true} {
			v := p.new.DeepCopy()
			if !changeAt(v.Object, steps, remove) {
				continue
			}
			what := "change"
			if remove {
				what = "remove"
			}
			out = append(out, pair{name: p.name + "/" + what + leafName(steps), old: p.old, new: v})
		}
	}
	return out
}

// collectLeaves lists the steps (map keys and list indexes) to every
// scalar of v, except managedFields and the last-applied annotation.
func collectLeaves(v any, steps []any, out *[][]any) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			if k != "managedFields" && k != LastAppliedAnnotation {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			collectLeaves(t[k], append(append([]any{}, steps...), k), out)
		}
	case []any:
		for i, x := range t {
			collectLeaves(x, append(append([]any{}, steps...), i), out)
		}
	default:
		*out = append(*out, steps)
	}
}

// changeAt changes the scalar at steps in obj (a string gets a suffix, a
// number grows, a bool flips, null becomes a string), or removes it.
func changeAt(obj map[string]any, steps []any, remove bool) bool {
	var parent any = obj
	for _, s := range steps[:len(steps)-1] {
		switch k := s.(type) {
		case string:
			parent = parent.(map[string]any)[k]
		case int:
			parent = parent.([]any)[k]
		}
	}
	last := steps[len(steps)-1]
	if m, ok := parent.(map[string]any); ok {
		if remove {
			delete(m, last.(string))
		} else {
			m[last.(string)] = changed(m[last.(string)])
		}
		return true
	}
	l := parent.([]any)
	if remove {
		return false // removing a list element shifts the others: a change of each
	}
	l[last.(int)] = changed(l[last.(int)])
	return true
}

func changed(v any) any {
	switch t := v.(type) {
	case string:
		return t + "-changed"
	case int64:
		return t + 1
	case float64:
		return t + 1
	case bool:
		return !t
	}
	return "changed"
}

func leafName(steps []any) string {
	b, _ := json.Marshal(steps)
	return string(b)
}

// TestPrunedAnalysesEqualOracle is the differential test of prune.go: on
// every captured review (kube-apiserver captures, benchmark reviews, the
// bad-input corpus), every merge fixture, and writes derived from them
// (one field changed or removed), each analysis with pruning equals the
// oracle's, facts, order, values and owners included.
func TestPrunedAnalysesEqualOracle(t *testing.T) {
	d := newDifferential()
	pairs := capturedPairs(t, "../webhook/testdata/reviews", "../webhook/testdata/bench", "../test/badinput/testdata")
	pairs = append(pairs, fixturePairs(t)...)
	rng := rand.New(rand.NewPCG(14, 1))
	n := 3
	if testing.Short() {
		n = 1
	}
	for _, p := range pairs {
		d.check(t, p)
		for _, v := range variants(p, rng, n) {
			d.check(t, v)
		}
	}
}

// TestShadowVerify checks that WithShadowVerify passes on agreeing
// analyses and reports a difference between the two runs.
func TestShadowVerify(t *testing.T) {
	a := NewAnalyzer(WithShadowVerify())
	for _, p := range capturedPairs(t, "../webhook/testdata/reviews") {
		if _, err := a.AnalyzeUpdate(p.old, withLastAppliedOfObject(p.new, p.old)); errors.Is(err, ErrShadowMismatch) {
			t.Errorf("%s: %v", p.name, err)
		}
	}
	_, err := verified(a, "test", func(a *Analyzer) (int, error) {
		if a.withoutPruning {
			return 1, nil
		}
		return 2, nil
	})
	if !errors.Is(err, ErrShadowMismatch) {
		t.Errorf("a difference gave %v, want ErrShadowMismatch", err)
	}
}

// genDeployment generates a Deployment with random maps and keyed lists:
// containers by name, their env by name, ports by containerPort and
// protocol (two ports may share a containerPort, where the strategic
// merge key and the field sets' keys differ), volumes by name.
func genDeployment(rng *rand.Rand) map[string]any {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	randMap := func(keys ...string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			if rng.IntN(2) == 0 {
				m[k] = pick("1", "2", "x")
			}
		}
		return m
	}
	var containers []any
	for _, name := range []string{"a", "b", "c"} {
		if rng.IntN(3) == 0 && len(containers) > 0 {
			continue
		}
		c := map[string]any{"name": name, "image": pick("img:1", "img:2")}
		var env []any
		for _, e := range []string{"A", "B", "C"} {
			if rng.IntN(2) == 0 {
				env = append(env, map[string]any{"name": e, "value": pick("1", "2")})
			}
		}
		if env != nil {
			c["env"] = env
		}
		if rng.IntN(2) == 0 {
			ports := []any{map[string]any{"containerPort": int64(80), "protocol": "TCP"}}
			if rng.IntN(2) == 0 {
				ports = append(ports, map[string]any{"containerPort": int64(80 + rng.IntN(2)), "protocol": "UDP"})
			}
			c["ports"] = ports
		}
		if rng.IntN(2) == 0 {
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": pick("1", "500m", "0.5")}}
		}
		containers = append(containers, c)
	}
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"}, "annotations": randMap("r", "s")},
			"spec":     map[string]any{"containers": containers, "nodeSelector": randMap("n1", "n2")},
		},
	}
	if rng.IntN(2) == 0 {
		spec["replicas"] = int64(1 + rng.IntN(3))
	}
	if rng.IntN(2) == 0 {
		spec["strategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": int64(1)}}
	}
	if rng.IntN(2) == 0 {
		spec["template"].(map[string]any)["spec"].(map[string]any)["volumes"] = []any{
			map[string]any{"name": "v", "emptyDir": map[string]any{}},
		}
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "labels": randMap("app", "tier"), "annotations": randMap("a", "b")},
		"spec":     spec,
	}
}

// mutate returns a copy of obj with up to n random leaves changed or
// removed.
func mutate(rng *rand.Rand, obj map[string]any, n int) map[string]any {
	out := runtimeDeepCopy(obj)
	for range rng.IntN(n + 1) {
		var leaves [][]any
		collectLeaves(out, nil, &leaves)
		if len(leaves) == 0 {
			break
		}
		steps := leaves[rng.IntN(len(leaves))]
		if steps[0] == "apiVersion" || steps[0] == "kind" || (len(steps) > 1 && steps[1] == "name" && steps[0] == "metadata") {
			continue
		}
		changeAt(out, steps, rng.IntN(3) == 0)
	}
	return out
}

// generatedWrite is a random write: old carries last-applied la and drifted
// from it, new is old with more changes.
func generatedWrite(t *testing.T, rng *rand.Rand) (la, old, new *unstructured.Unstructured) {
	la = &unstructured.Unstructured{Object: genDeployment(rng)}
	old = &unstructured.Unstructured{Object: mutate(rng, la.Object, 2)}
	setLastApplied(t, old, la)
	new = &unstructured.Unstructured{Object: mutate(rng, old.Object, 3)}
	return la, old, new
}

// TestPrunedPatchEqualsWhole is the property behind putBackPruned: on
// generated objects, kubectl's patch recomputed on the pruned objects
// gives the same result as on the whole ones at every path it was pruned
// to (a random set of the fields last-applied sets to a non-empty value,
// as putBack's facts), and fails only when the
// whole one fails.
func TestPrunedPatchEqualsWhole(t *testing.T) {
	a := NewAnalyzer()
	rng := rand.New(rand.NewPCG(14, 3))
	containers := Path{fieldName("spec"), fieldName("template"), fieldName("spec"), fieldName("containers")}
	listsPruned := 0
	for i := range 300 {
		la, _, live := generatedWrite(t, rng)
		tvs, err := a.fieldSets(written(la.Object))
		if err != nil {
			t.Fatal(err)
		}
		set, err := tvs[0].ToFieldSet()
		if err != nil {
			t.Fatal(err)
		}
		// Fields inside list elements (as the facts of an edit) and whole
		// elements (as the facts of an added or removed one).
		var candidates []Path
		set.Leaves().Iterate(func(fp fieldpath.Path) { candidates = append(candidates, Path(fp).Append()) })
		candidates = append(candidates, units(set)...)
		var paths []Path
		for _, p := range candidates {
			// As the facts that putBack checks: fields that last-applied
			// sets to a value, not the server's.
			if !serverManaged(p) && !isEmpty(at(la.Object, p).v) && rng.IntN(6) == 0 {
				paths = append(paths, p)
			}
		}
		whole, wholeErr := a.ApplyManifest(la, withLastAppliedOf(live, la))
		keep := keepTreeOf(paths, a.patchMeta(live))
		prunedLa, prunedLive := keep.pruneObject(la), keep.pruneObject(live)
		l, ok := at(prunedLa.Object, containers).v.([]any)
		if ok && len(l) < len(at(la.Object, containers).v.([]any)) && !same(at(prunedLive.Object, containers), presence{v: l, ok: true}) {
			listsPruned++ // a pruned list that the patch must merge
		}
		pruned, prunedErr := a.ApplyManifest(prunedLa, withLastAppliedOf(prunedLive, prunedLa))
		if prunedErr != nil && wholeErr == nil {
			t.Fatalf("case %d: only the pruned patch fails: %v", i, prunedErr)
		}
		if wholeErr != nil || prunedErr != nil {
			continue
		}
		f := newFinder()
		for _, p := range paths {
			if w, g := f.at(whole.Result.Object, p), f.at(pruned.Result.Object, p); !cmp.Equal(w, g, cmp.AllowUnexported(presence{})) {
				t.Errorf("case %d: at %s the whole patch gives %v, the pruned one %v", i, p, w, g)
			}
		}
	}
	if listsPruned < 10 {
		t.Errorf("%d containers lists that differ were pruned: the property was not exercised on keyed lists", listsPruned)
	}
}

// TestOwnedUnchangedMeansNoChanges is the property behind the skip in
// imperativeChanges: on generated writes, whenever ownedUnchanged holds,
// the oracle finds no imperative change; and every generated write
// analyzes the same with and without pruning.
func TestOwnedUnchangedMeansNoChanges(t *testing.T) {
	d := newDifferential()
	rng := rand.New(rand.NewPCG(14, 4))
	skipped := 0
	for i := range 200 {
		la, old, new := generatedWrite(t, rng)
		if rng.IntN(2) == 0 {
			new = &unstructured.Unstructured{Object: runtimeDeepCopy(old.Object)}
			unstructured.SetNestedField(new.Object, "x", "metadata", "labels", "unowned") //nolint:errcheck // metadata is a map
		}
		if ownedUnchanged(la.Object, old.Object, new.Object) {
			skipped++
			an, err := d.oracle.AnalyzeUpdate(old, new)
			if err != nil {
				t.Fatal(err)
			}
			if len(an.ImperativeChanges) > 0 {
				t.Errorf("case %d: ownedUnchanged, yet the oracle finds %v", i, an.ImperativeChanges)
			}
		}
		d.check(t, pair{name: "generated", old: old, new: new})
	}
	if skipped == 0 {
		t.Error("no generated write was skipped: the property was not exercised")
	}
}

// FuzzPrunedEqualsOracle holds every analysis with pruning equal to the
// oracle's on random writes: old and new as JSON, with lastApplied as
// old's last-applied annotation (none when empty).
func FuzzPrunedEqualsOracle(f *testing.F) {
	fuzzDifferential(f, newDifferential(), "seed004-undo", "seed003-restarted-at", "crd-json-merge", "statefulset-ondelete")
}

// fuzzDifferential seeds f with the live, modified and original objects of
// the testdata dirs and holds d's pruned analyses equal to its oracle's on
// random writes: old and new as JSON, with lastApplied as old's
// last-applied annotation (none when empty).
func fuzzDifferential(f *testing.F, d differential, dirs ...string) {
	for _, dir := range dirs {
		live, _ := testdata.ReadFile("testdata/" + dir + "/live.yaml")
		manifest, _ := testdata.ReadFile("testdata/" + dir + "/modified.yaml")
		original, _ := testdata.ReadFile("testdata/" + dir + "/original.yaml")
		f.Add(yamlToJSON(f, live), yamlToJSON(f, manifest), string(yamlToJSON(f, original)))
	}
	f.Fuzz(func(t *testing.T, oldJSON, newJSON []byte, lastApplied string) {
		old, ok := decodeObject(oldJSON)
		if !ok {
			return
		}
		new, ok := decodeObject(newJSON)
		if !ok {
			return
		}
		if meta, ok := old.Object["metadata"].(map[string]any); ok && lastApplied != "" {
			annots, _ := meta["annotations"].(map[string]any)
			if annots == nil {
				annots = map[string]any{}
				meta["annotations"] = annots
			}
			annots[LastAppliedAnnotation] = lastApplied
		}
		d.check(t, pair{name: "fuzz", old: old, new: new})
	})
}

// TestPutBackPrunedAnswersCapturedEdits guards the shortcut itself: on the
// captured edits, the pruned recomputation of kubectl's patch answers
// (keeps every fact) instead of falling back to the whole objects, which
// would cost more than no pruning at all.
func TestPutBackPrunedAnswersCapturedEdits(t *testing.T) {
	a := NewAnalyzer(withoutPruning())
	check := func(FieldFact) bool { return true }
	answered := 0
	for _, p := range capturedPairs(t, "../webhook/testdata/bench", "../webhook/testdata/reviews") {
		new := withLastAppliedOfObject(p.new, p.old)
		an, err := a.AnalyzeUpdate(p.old, new)
		la, laErr := ParseLastApplied(p.old)
		if err != nil || laErr != nil || len(an.ImperativeChanges) == 0 || new.GetKind() == "Secret" {
			continue
		}
		if _, ok := a.putBackPruned(la, new, an.ImperativeChanges, check); !ok {
			t.Errorf("%s: the pruned patch did not answer for %d facts", p.name, len(an.ImperativeChanges))
		}
		answered++
	}
	if answered == 0 {
		t.Error("no captured edit has imperative changes")
	}
}

// TestWithLastAppliedValueShallow holds the shallow copy equal to the deep
// copy and SetAnnotations it replaced, also for metadata and annotations
// of unusual types, and checks that the object itself is not changed.
func TestWithLastAppliedValueShallow(t *testing.T) {
	deep := func(obj *unstructured.Unstructured, value string) *unstructured.Unstructured {
		out := obj.DeepCopy()
		a := out.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[LastAppliedAnnotation] = value
		out.SetAnnotations(a)
		return out
	}
	tests := map[string]string{
		"an object with annotations":         `{"kind":"A","metadata":{"name":"x","annotations":{"a":"1"}},"spec":{"b":[1]}}`,
		"an object without annotations":      `{"kind":"A","metadata":{"name":"x"}}`,
		"an object without metadata":         `{"kind":"A"}`,
		"null metadata":                      `{"kind":"A","metadata":null}`,
		"metadata that is not an object":     `{"kind":"A","metadata":"x"}`,
		"null annotations":                   `{"kind":"A","metadata":{"annotations":null}}`,
		"annotations that are not strings":   `{"kind":"A","metadata":{"annotations":{"a":1}}}`,
		"annotations that are not an object": `{"kind":"A","metadata":{"annotations":[1]}}`,
		"an annotation to replace":           `{"kind":"A","metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}}}`,
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			obj, _ := decodeObject([]byte(doc))
			before := obj.DeepCopy()
			got := withLastAppliedValue(obj, `{"kind":"A"}`)
			if diff := cmp.Diff(deep(before, `{"kind":"A"}`).Object, got.Object); diff != "" {
				t.Errorf("(-deep copy +shallow copy):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
				t.Errorf("the object changed (-before +after):\n%s", diff)
			}
		})
	}
}

// normalize converts numbers to float64 so int64 and float64 compare
// equal: the copy that jsonEqual compares as reflect.DeepEqual would.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalize(x)
		}
		return out
	case int64:
		return float64(t)
	case int:
		return float64(t)
	case int32:
		return float64(t)
	case json.Number:
		f, _ := t.Float64()
		return f
	}
	return v
}

// TestJSONEqualMatchesNormalize holds the allocation-free jsonEqual equal
// to the comparison of normalized copies it replaced, on generated values
// of every JSON type, numbers of several Go types, nil and empty maps and
// lists.
func TestJSONEqualMatchesNormalize(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 5))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := rng.IntN(12); {
		case n == 0:
			return nil
		case n == 1:
			return rng.IntN(2) == 0
		case n == 2:
			return []string{"a", "b"}[rng.IntN(2)]
		case n == 3:
			return int64(rng.IntN(2))
		case n == 4:
			return float64(rng.IntN(2))
		case n == 5:
			return json.Number([]string{"0", "1", "1.0"}[rng.IntN(3)])
		case n == 6:
			return rng.IntN(2)
		case n == 7:
			if rng.IntN(2) == 0 {
				return map[string]any(nil)
			}
			return []any(nil)
		case n < 10 && depth < 3:
			m := map[string]any{}
			for range rng.IntN(3) {
				m[[]string{"x", "y"}[rng.IntN(2)]] = gen(depth + 1)
			}
			return m
		case depth < 3:
			l := []any{}
			for range rng.IntN(3) {
				l = append(l, gen(depth+1))
			}
			return l
		}
		return "leaf"
	}
	equal := 0
	for i := range 20000 {
		a, b := gen(0), gen(0)
		want := reflect.DeepEqual(normalize(a), normalize(b))
		if want {
			equal++
		}
		if got := jsonEqual(a, b); got != want {
			t.Fatalf("case %d: jsonEqual(%#v, %#v) = %v, want %v", i, a, b, got, want)
		}
		if got := jsonEqual(a, a); got != reflect.DeepEqual(normalize(a), normalize(a)) {
			t.Fatalf("case %d: jsonEqual(%#v, itself) = %v", i, a, got)
		}
	}
	if equal < 100 {
		t.Errorf("only %d generated pairs were equal: the property was barely exercised", equal)
	}
}
