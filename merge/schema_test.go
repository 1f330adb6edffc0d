package merge

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// routeGVK is the kind of the custom resource in testdata/schemas.
var routeGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Route"}

// routeSchemas is a SchemaSource with the Route's structural schema, as
// kube-apiserver 1.37 publishes it at /openapi/v3/apis/example.com/v1 for
// the CRD of test/e2e/crd/testdata/crd.yaml (testdata/schemas/route.json:
// the components that the Route needs, descriptions dropped).
func routeSchemas(t testing.TB) SchemaSource {
	t.Helper()
	data, err := testdata.ReadFile("testdata/schemas/route.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]*spec.Schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("decoding route.json: %v", err)
	}
	tc, err := managedfields.NewTypeConverter(doc.Components.Schemas, false)
	if err != nil {
		t.Fatalf("building the type converter: %v", err)
	}
	return SchemaSourceFunc(func(gvk schema.GroupVersionKind) (managedfields.TypeConverter, bool) {
		return tc, gvk == routeGVK
	})
}

// schemaFactPaths renders the paths of facts in kubectl's notation; [] for none.
func schemaFactPaths(facts []FieldFact) []string {
	out := []string{}
	for _, f := range facts {
		out = append(out, f.Path.String())
	}
	return out
}

// TestSchemaApply compares the facts of applies of a Route with the CRD's
// schema and without (deduced: every list one atomic field). kubectl's
// JSON merge patch puts a list that drifted back whole when the manifest
// has it: with the schema the apply reverts canary and primary's weight
// element by element, without it spec.routes. A list that neither
// manifest has keeps what kubectl patch and a controller added: with the
// schema only the person's element is an orphan, without it the whole
// list is one field with a controller among its owners, and nothing is
// reported.
func TestSchemaApply(t *testing.T) {
	tests := map[string]struct {
		dir                                    string
		wantOrphans, wantReverts               []string
		wantDeducedOrphans, wantDeducedReverts []string
	}{
		"a manifest that keeps spec.routes reverts the drifted list per element": {
			dir:                "schemas/route-revert",
			wantOrphans:        []string{},
			wantReverts:        []string{"spec.routes[name=canary]", "spec.routes[name=primary].weight"},
			wantDeducedOrphans: []string{},
			wantDeducedReverts: []string{"spec.routes"},
		},
		"a manifest without spec.routes leaves canary, an orphan at its element": {
			dir:                "schemas/route-orphan",
			wantOrphans:        []string{"spec.routes[name=canary]"},
			wantReverts:        []string{},
			wantDeducedOrphans: []string{},
			wantDeducedReverts: []string{},
		},
	}
	withSchema, deduced := NewAnalyzer(WithSchemas(routeSchemas(t))), NewAnalyzer()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, tc.dir)
			res, an, err := withSchema.predictApply(f.live, f.modified)
			if err != nil {
				t.Fatal(err)
			}
			if res.Strategy != JSONMergePatch {
				t.Errorf("strategy %q, want %q: the schema does not change kubectl's patch", res.Strategy, JSONMergePatch)
			}
			_, dan, err := deduced.predictApply(f.live, f.modified)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{"orphans": schemaFactPaths(an.Orphans), "reverts": schemaFactPaths(an.Reverts),
				"deduced orphans": schemaFactPaths(dan.Orphans), "deduced reverts": schemaFactPaths(dan.Reverts)}
			want := map[string][]string{"orphans": tc.wantOrphans, "reverts": tc.wantReverts,
				"deduced orphans": tc.wantDeducedOrphans, "deduced reverts": tc.wantDeducedReverts}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSchemaOrphanFact checks the whole orphan fact at a list element: its
// value, its owner and the JSON patch that removes it.
func TestSchemaOrphanFact(t *testing.T) {
	f := loadFixture(t, "schemas/route-orphan")
	_, an, err := NewAnalyzer(WithSchemas(routeSchemas(t))).predictApply(f.live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	canary := map[string]any{"name": "canary", "backend": "web-v2", "weight": float64(10)}
	want := []FieldFact{{
		Path:   mustPath(t, "spec.routes[name=canary]"),
		Live:   canary,
		Result: canary,
		Owners: []Owner{{Manager: "kubectl-patch", Operation: "Update", APIVersion: "example.com/v1",
			Time: time.Date(2026, 11, 1, 11, 0, 0, 0, time.UTC)}},
		RemovePatch: `[{"op":"test","path":"/spec/routes/0/name","value":"canary"},{"op":"remove","path":"/spec/routes/0"}]`,
		Pointer:     "/spec/routes/0",
	}}
	if diff := cmp.Diff(want, an.Orphans, pathsAsStrings); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
}

// TestSchemaImperativeEdit compares the imperative changes of edits of a
// Route with the CRD's schema and without. Without it any edit of a route
// is an edit of spec.routes, which last-applied owns; with it the weight
// is named at its element and an added route is nobody's yet (the next
// apply reports removing it, see TestSchemaApply). The atomic tls is one
// field either way; a key added to the atomic selector changes a field
// that last-applied owns, but the next apply's JSON merge patch merges
// maps key by key and keeps it, so it is no imperative change (putBack).
func TestSchemaImperativeEdit(t *testing.T) {
	tests := map[string]struct {
		edit              func(obj map[string]any)
		want, wantDeduced []string
	}{
		"primary's weight changed": {
			edit: func(obj map[string]any) {
				routes(obj)[0].(map[string]any)["weight"] = int64(50)
			},
			want: []string{"spec.routes[name=primary].weight"}, wantDeduced: []string{"spec.routes"},
		},
		"a route added": {
			edit: func(obj map[string]any) {
				spec := obj["spec"].(map[string]any)
				spec["routes"] = append(routes(obj), map[string]any{"name": "canary", "backend": "web-v2"})
			},
			want: []string{}, wantDeduced: []string{"spec.routes"},
		},
		"a key added to the atomic selector, which the next apply's JSON merge patch keeps": {
			edit: func(obj map[string]any) {
				obj["spec"].(map[string]any)["selector"].(map[string]any)["tier"] = "front"
			},
			want: []string{}, wantDeduced: []string{},
		},
		"a certificate added to the atomic list tls": {
			edit: func(obj map[string]any) {
				spec := obj["spec"].(map[string]any)
				spec["tls"] = append(spec["tls"].([]any), "extra-cert")
			},
			want: []string{"spec.tls"}, wantDeduced: []string{"spec.tls"},
		},
	}
	withSchema, deduced := NewAnalyzer(WithSchemas(routeSchemas(t))), NewAnalyzer()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, "schemas/route-edit")
			new := f.live.DeepCopy()
			tc.edit(new.Object)
			an, err := withSchema.AnalyzeUpdate(f.live, new)
			if err != nil {
				t.Fatal(err)
			}
			dan, err := deduced.AnalyzeUpdate(f.live, new)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{"schema": schemaFactPaths(an.ImperativeChanges), "deduced": schemaFactPaths(dan.ImperativeChanges)}
			if diff := cmp.Diff(map[string][]string{"schema": tc.want, "deduced": tc.wantDeduced}, got); diff != "" {
				t.Errorf("imperative changes (-want +got):\n%s", diff)
			}
		})
	}
}

func routes(obj map[string]any) []any {
	return obj["spec"].(map[string]any)["routes"].([]any)
}

// TestSchemaDoesNotFit checks that a manifest with a field the schema
// lacks is analyzed with deduced field sets, as without a schema, instead
// of failing.
func TestSchemaDoesNotFit(t *testing.T) {
	f := loadFixture(t, "schemas/route-orphan")
	manifest := f.modified.DeepCopy()
	if err := unstructured.SetNestedField(manifest.Object, "x", "spec", "unknown"); err != nil {
		t.Fatal(err)
	}
	_, an, err := NewAnalyzer(WithSchemas(routeSchemas(t))).predictApply(f.live, manifest)
	if err != nil {
		t.Fatal(err)
	}
	_, dan, err := NewAnalyzer().predictApply(f.live, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(dan, an, pathsAsStrings); diff != "" {
		t.Errorf("analysis differs from the deduced one (-deduced +schema):\n%s", diff)
	}
}

// TestSchemaChangeIsUsed checks that the Analyzer asks its SchemaSource on
// every analysis: a source that starts answering for the kind changes the
// next analysis, without a new Analyzer.
func TestSchemaChangeIsUsed(t *testing.T) {
	src := routeSchemas(t)
	known := false
	a := NewAnalyzer(WithSchemas(SchemaSourceFunc(func(gvk schema.GroupVersionKind) (managedfields.TypeConverter, bool) {
		if !known {
			return nil, false
		}
		return src.TypeConverter(gvk)
	})))
	f := loadFixture(t, "schemas/route-orphan")
	var got []string
	for _, k := range []bool{false, true} {
		known = k
		_, an, err := a.predictApply(f.live, f.modified)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, schemaFactPaths(an.Orphans)...)
	}
	if diff := cmp.Diff([]string{"spec.routes[name=canary]"}, got); diff != "" {
		t.Errorf("orphans of the two analyses (-want +got):\n%s", diff)
	}
}

// TestSchemaPrunedAnalysesEqualOracle is TestPrunedAnalysesEqualOracle for
// Routes analyzed with their schema.
func TestSchemaPrunedAnalysesEqualOracle(t *testing.T) {
	src := routeSchemas(t)
	d := differential{pruned: NewAnalyzer(WithSchemas(src)),
		oracle: NewAnalyzer(WithSchemas(src), withoutPruning(), WithLastAppliedCacheSize(0))}
	rng := rand.New(rand.NewPCG(15, 2))
	for _, dir := range []string{"schemas/route-orphan", "schemas/route-revert", "schemas/route-edit"} {
		f := loadFixture(t, dir)
		for _, target := range []*unstructured.Unstructured{f.modified, f.original} {
			if target == nil {
				continue
			}
			stored := target.DeepCopy()
			setLastApplied(t, stored, target)
			p := pair{name: dir, old: f.live, new: stored}
			d.check(t, p)
			for _, v := range variants(p, rng, 8) {
				d.check(t, v)
			}
		}
	}
}

// TestSchemaListsReplacedWhole checks what follows from kubectl's JSON
// merge patch replacing a list whole, with element paths from the schema:
// a route added to a list that last-applied has is no orphan (the next
// apply removes it), one added to a list that last-applied lacks is; and
// the webhook's view of that apply (old and new) reports the removal of
// the added route as a revert, not as another webhook's removal.
func TestSchemaListsReplacedWhole(t *testing.T) {
	a := NewAnalyzer(WithSchemas(routeSchemas(t)))
	got := map[string][]string{}
	for _, dir := range []string{"schemas/route-revert", "schemas/route-orphan"} {
		f := loadFixture(t, dir)
		an, err := a.AnalyzeLive(f.live)
		if err != nil {
			t.Fatal(err)
		}
		got["live orphans of "+dir] = schemaFactPaths(an.Orphans)
	}
	f := loadFixture(t, "schemas/route-revert")
	applied := f.live.DeepCopy()
	if err := unstructured.SetNestedSlice(applied.Object, []any{
		map[string]any{"name": "primary", "backend": "web-v1", "weight": int64(100)},
	}, "spec", "routes"); err != nil {
		t.Fatal(err)
	}
	an, err := a.AnalyzeClientSideApply(f.live, applied)
	if err != nil {
		t.Fatal(err)
	}
	got["reverts of the apply as the webhook sees it"] = schemaFactPaths(an.Reverts)
	want := map[string][]string{
		"live orphans of schemas/route-revert":        {},
		"live orphans of schemas/route-orphan":        {"spec.routes[name=canary]"},
		"reverts of the apply as the webhook sees it": {"spec.routes[name=canary]", "spec.routes[name=primary].weight"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
}

// BenchmarkSchemaAnalyzeApply measures the apply analysis of a Route with
// the CRD's schema against deduced field sets.
func BenchmarkSchemaAnalyzeApply(b *testing.B) {
	read := func(name string) *unstructured.Unstructured {
		data, err := testdata.ReadFile("testdata/schemas/route-revert/" + name)
		if err != nil {
			b.Fatal(err)
		}
		return mustYAML(b, data)
	}
	live, manifest := read("live.yaml"), read("modified.yaml")
	setLastApplied(b, live, read("original.yaml"))
	for name, a := range map[string]*Analyzer{"schema": NewAnalyzer(WithSchemas(routeSchemas(b))), "deduced": NewAnalyzer()} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := a.predictApply(live, manifest); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzSchemaPrunedEqualsOracle is FuzzPrunedEqualsOracle for objects
// analyzed with the Route's schema: seeded with the Route fixtures, the
// pruned analyses must equal the oracle's. Run it with: go test ./merge
// -run '^$' -fuzz FuzzSchemaPrunedEqualsOracle -fuzzminimizetime 200x
func FuzzSchemaPrunedEqualsOracle(f *testing.F) {
	src := routeSchemas(f)
	fuzzDifferential(f, differential{pruned: NewAnalyzer(WithSchemas(src)),
		oracle: NewAnalyzer(WithSchemas(src), withoutPruning(), WithLastAppliedCacheSize(0))},
		"schemas/route-orphan", "schemas/route-revert")
}

// TestSchemaOfTheObjectsVersion: the field sets of an apply follow the
// schema of the version the object is in, which kubectl's patch and the
// manifest share. A previous manifest of another version (here
// example.com/v1beta1, which the manifest moved from and the API server no
// longer publishes) is read in the object's version too, as kubectl reads
// it: the facts are those of route-orphan, not the deduced ones (none).
func TestSchemaOfTheObjectsVersion(t *testing.T) {
	f := loadFixture(t, "schemas/route-orphan")
	live := f.live.DeepCopy()
	original := f.original.DeepCopy()
	original.SetAPIVersion("example.com/v1beta1")
	setLastApplied(t, live, original)
	_, an, err := NewAnalyzer(WithSchemas(routeSchemas(t))).predictApply(live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spec.routes[name=canary]"}, schemaFactPaths(an.Orphans)); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
}

// TestSchemaPrunedFieldIsNoDrift: the API server prunes from a custom
// resource every field its CRD's schema does not declare, so a
// last-applied that has one (applied with --validate=false, or before the
// CRD dropped the field) differs from live there although nobody changed
// it, and the next apply does not set it back: no drift, which the audit
// reports as an imperative edit. The host that differs from last-applied,
// a field the schema declares, is drift. Without the schema nothing tells
// that the server pruned the other.
func TestSchemaPrunedFieldIsNoDrift(t *testing.T) {
	f := loadFixture(t, "schemas/route-orphan")
	live := f.live.DeepCopy()
	original := f.original.DeepCopy()
	if err := unstructured.SetNestedField(original.Object, "30s", "spec", "timeout"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(original.Object, "old.example.com", "spec", "host"); err != nil {
		t.Fatal(err)
	}
	setLastApplied(t, live, original)
	tests := map[string]struct {
		a    *Analyzer
		want []string
	}{
		"with the schema the pruned field is no drift": {a: NewAnalyzer(WithSchemas(routeSchemas(t))), want: []string{"spec.host"}},
		"without it, it is":                            {a: NewAnalyzer(), want: []string{"spec.host", "spec.timeout"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			an, err := tc.a.AnalyzeLive(live)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, schemaFactPaths(an.Drift)); diff != "" {
				t.Errorf("drift (-want +got):\n%s", diff)
			}
		})
	}
}
