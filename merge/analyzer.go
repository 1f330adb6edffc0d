package merge

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Analyzer recomputes kubectl's apply and derives field-level facts. Build
// one with NewAnalyzer when the program starts: building its type converter
// is expensive. An Analyzer is safe for concurrent use; it holds no state
// that a call changes.
type Analyzer struct {
	scheme  *runtime.Scheme
	typed   managedfields.TypeConverter
	deduced managedfields.TypeConverter
	// schemas gives the type converters of kinds without a Go type; nil
	// when they get deduced field sets (WithSchemas).
	schemas SchemaSource
	// validateStored makes convertTyped validate stored objects too: see
	// orValidated.
	validateStored  bool
	maxValueLength  int
	kubectlManagers map[string]bool
	// withoutPruning turns the shortcuts of prune.go off: the analyses as
	// they were before them, the oracle of the differential tests. Only
	// tests set it (withoutPruning in prune_test.go).
	withoutPruning bool
	// shadowVerify runs every analysis also without pruning and fails on
	// a difference (WithShadowVerify).
	shadowVerify bool
	// lastApplied caches parsed last-applied annotations; nil when off.
	lastApplied *lastAppliedCache
}

// NewAnalyzer returns an Analyzer configured by opts.
func NewAnalyzer(opts ...Option) *Analyzer {
	o := options{scheme: scheme.Scheme, maxValueLength: maxString, kubectlManagers: map[string]bool{},
		lastAppliedCacheSize: DefaultLastAppliedCacheSize}
	for _, opt := range opts {
		opt(&o)
	}
	return &Analyzer{
		scheme:          o.scheme,
		typed:           applyconfigurations.NewTypeConverter(o.scheme),
		deduced:         managedfields.NewDeducedTypeConverter(),
		schemas:         o.schemas,
		maxValueLength:  o.maxValueLength,
		kubectlManagers: o.kubectlManagers,
		withoutPruning:  o.withoutPruning,
		shadowVerify:    o.shadowVerify,
		lastApplied:     newLastAppliedCache(o.lastAppliedCacheSize),
	}
}

// source is an object to convert to a typed value.
type source struct {
	obj map[string]any
	// cached, for last-applied (see writtenLastApplied), holds its typed
	// value, converted once from what build returns (obj).
	cached *typedOnce
	build  func() map[string]any
	// stored marks an object that the API server decoded into its Go type
	// before admission (old, new, live, result, the parent of a /scale):
	// it fits the kind's schema, so its conversion skips validation.
	stored bool
}

// written is a source that a person wrote (a manifest, last-applied):
// validated against the kind's schema when converted.
func written(obj map[string]any) source { return source{obj: obj} }

// stored is a source that the API server wrote (see source.stored),
// without its managedFields (see withoutManagedFields).
func stored(obj map[string]any) source {
	return source{obj: withoutManagedFields(obj), stored: true}
}

// fieldSets converts objects of one kind to typed values with the kind's
// schema, or, when a written one does not fit it (or the kind has none),
// all of them with the deduced one, so that the sets are comparable. Nil
// objects give empty sets.
func (a *Analyzer) fieldSets(srcs ...source) ([]*typed.TypedValue, error) {
	out, err := a.convertTyped(srcs)
	if err == nil {
		return out, nil
	}
	out, err = convertAll(a.deduced, srcs)
	if err != nil {
		return nil, fmt.Errorf("converting to field sets: %w", err)
	}
	return out, nil
}

// compareStored compares the field sets of old and new as stored (their
// server-managed metadata left out): what a write from old to new added,
// changed and removed.
func (a *Analyzer) compareStored(old, new *unstructured.Unstructured) (*typed.Comparison, error) {
	tvs, err := a.fieldSets(stored(old.Object), stored(new.Object))
	if err != nil {
		return nil, err
	}
	cmp, err := tvs[0].Compare(tvs[1])
	if err != nil {
		return nil, fmt.Errorf("comparing old and new object: %w", err)
	}
	return cmp, nil
}

// convertTyped converts srcs with the kind's schema. A stored object is
// not validated: validation walks the whole object once more, a fifth of
// a review's time, and the API server decoded it into its Go type, which
// is what the schema describes. Its field set treats a field the schema
// does not know (from a newer server) as a leaf. The schema of a kind
// without a Go type comes from the SchemaSource (converterFor); its
// values skip the cache of last-applied, which holds the scheme's typed
// values and would outlive a change of the schema.
func (a *Analyzer) convertTyped(srcs []source) ([]*typed.TypedValue, error) {
	gvk := kindOf(srcs)
	tc, fromSource := a.converterFor(gvk)
	// The schema and type of the kind, from an object with nothing but
	// apiVersion and kind: cheaper than a table of every kind built at
	// start.
	t, err := tc.ObjectToTyped(withKind(nil, gvk))
	if err != nil {
		return nil, err
	}
	out := make([]*typed.TypedValue, len(srcs))
	for i, src := range srcs {
		if src.cached != nil && !fromSource {
			if r := src.cached.get(a, src.build); r.gvk == gvk {
				if r.err != nil {
					return nil, r.err
				}
				out[i] = r.tv
				continue
			}
		}
		if !src.stored || a.validateStored {
			tv, err := tc.ObjectToTyped(withKind(src.obj, gvk), typed.AllowDuplicates)
			if err != nil {
				return nil, err
			}
			out[i] = tv
			continue
		}
		obj := src.obj
		if obj == nil {
			obj = map[string]any{}
		}
		//nolint:staticcheck // SA1019: deprecated only in favour of validating, which stored objects do not need (see above).
		out[i] = typed.AsTypedUnvalidated(value.NewValueInterface(obj), t.Schema(), t.TypeRef())
	}
	return out, nil
}

// orValidated runs analyze, and when it fails, once more on a copy of a
// that validates every object. A stored object that does not fit its
// schema (which the API server never sends, but a forged review can) makes
// a comparison fail without validation; with it, fieldSets falls back to
// deduced field sets, as for any object that does not fit.
func orValidated[T any](a *Analyzer, analyze func(*Analyzer) (T, error)) (T, error) {
	out, err := analyze(a)
	if err == nil || a.validateStored {
		return out, err
	}
	strict := *a
	strict.validateStored = true
	return analyze(&strict)
}

func convertAll(tc managedfields.TypeConverter, srcs []source) ([]*typed.TypedValue, error) {
	gvk := kindOf(srcs)
	out := make([]*typed.TypedValue, len(srcs))
	for i, src := range srcs {
		tv, err := tc.ObjectToTyped(withKind(src.obj, gvk), typed.AllowDuplicates)
		if err != nil {
			return nil, err
		}
		out[i] = tv
	}
	return out, nil
}

// kindOf is the kind of the last non-nil source. Every caller lists the
// object as the API server holds it last (after last-applied and the
// manifest), so its version's schema reads them all: the version kubectl
// computes its patch in, which a previous manifest of another version
// (example.com/v1beta1 before the manifest moved to v1) does not name.
func kindOf(srcs []source) schema.GroupVersionKind {
	for i := len(srcs) - 1; i >= 0; i-- {
		if srcs[i].obj != nil {
			return (&unstructured.Unstructured{Object: srcs[i].obj}).GroupVersionKind()
		}
	}
	return schema.GroupVersionKind{}
}

// withKind returns a shallow copy of obj with apiVersion and kind of gvk:
// setting the kind must not change the caller's map.
func withKind(obj map[string]any, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: make(map[string]any, len(obj)+2)}
	for k, v := range obj {
		u.Object[k] = v
	}
	if !gvk.Empty() {
		u.SetGroupVersionKind(gvk)
	}
	return u
}

// withoutManagedFields returns a server-written object (live, result, old
// or new) without metadata.managedFields, for stored: the API server
// writes and validates managedFields, and no analysis reports them
// (serverManaged), so converting them, as large as the rest of a typical
// object, is wasted. obj is not changed.
func withoutManagedFields(obj map[string]any) map[string]any {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok || meta["managedFields"] == nil {
		return obj
	}
	out := maps.Clone(obj)
	m := maps.Clone(meta)
	delete(m, "managedFields")
	out["metadata"] = m
	return out
}
