package merge

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Analyzer recomputes kubectl's apply and derives field-level facts. Build
// one with NewAnalyzer when the program starts: building its type converter
// is expensive. An Analyzer is safe for concurrent use; it holds no state
// that a call changes.
type Analyzer struct {
	scheme          *runtime.Scheme
	typed           managedfields.TypeConverter
	deduced         managedfields.TypeConverter
	maxValueLength  int
	kubectlManagers map[string]bool
	defaults        defaultTable
}

// NewAnalyzer returns an Analyzer configured by opts.
func NewAnalyzer(opts ...Option) *Analyzer {
	o := options{scheme: scheme.Scheme, maxValueLength: maxString, kubectlManagers: map[string]bool{}}
	for _, opt := range opts {
		opt(&o)
	}
	return &Analyzer{
		scheme:          o.scheme,
		typed:           applyconfigurations.NewTypeConverter(o.scheme),
		deduced:         managedfields.NewDeducedTypeConverter(),
		maxValueLength:  o.maxValueLength,
		kubectlManagers: o.kubectlManagers,
		defaults:        newDefaultTable(),
	}
}

// IsKubectlManager reports whether a field manager name is one that kubectl
// records for a person's write: "kubectl" (server-side apply, and the
// user-agent default of commands that send no field manager, such as
// `rollout undo` and `scale`), "kubectl-client-side-apply", "kubectl-edit",
// "kubectl-patch", "kubectl-set", "kubectl-rollout", "kubectl-label",
// "kubectl-annotate", "kubectl-create", "kubectl-replace" and any other
// "kubectl-…" name, and "before-first-apply", which the server gives to
// fields that existed before the first server-side apply.
func IsKubectlManager(name string) bool {
	return name == "kubectl" || strings.HasPrefix(name, "kubectl-") || name == "before-first-apply"
}

func (a *Analyzer) isKubectlManager(name string) bool {
	return IsKubectlManager(name) || a.kubectlManagers[name]
}

// fieldSets converts objects of one kind to field sets with the typed
// converter, or, when any of them does not fit the kind's schema (or the
// kind has none), all of them with the deduced one, so that the sets are
// comparable. Nil objects give empty sets.
func (a *Analyzer) fieldSets(objs ...map[string]any) ([]*typed.TypedValue, error) {
	out, err := convertAll(a.typed, objs)
	if err == nil {
		return out, nil
	}
	out, err = convertAll(a.deduced, objs)
	if err != nil {
		return nil, fmt.Errorf("converting to field sets: %w", err)
	}
	return out, nil
}

func convertAll(tc managedfields.TypeConverter, objs []map[string]any) ([]*typed.TypedValue, error) {
	out := make([]*typed.TypedValue, len(objs))
	var gvkSource *unstructured.Unstructured
	for _, obj := range objs {
		if obj != nil {
			gvkSource = &unstructured.Unstructured{Object: obj}
			break
		}
	}
	for i, obj := range objs {
		// A shallow copy: setting the kind must not change the caller's map.
		u := &unstructured.Unstructured{Object: make(map[string]any, len(obj)+2)}
		for k, v := range obj {
			u.Object[k] = v
		}
		if gvkSource != nil {
			u.SetGroupVersionKind(gvkSource.GroupVersionKind())
		}
		tv, err := tc.ObjectToTyped(u, typed.AllowDuplicates)
		if err != nil {
			return nil, err
		}
		out[i] = tv
	}
	return out, nil
}

// withoutManagedFields returns a server-written object (live, result, old
// or new) without metadata.managedFields, for fieldSets: the API server
// writes and validates managedFields, and no analysis reports them
// (serverManaged), so converting them, as large as the rest of a typical
// object, is wasted. obj is not changed.
func withoutManagedFields(obj map[string]any) map[string]any {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok || meta["managedFields"] == nil {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	m := make(map[string]any, len(meta))
	for k, v := range meta {
		if k != "managedFields" {
			m[k] = v
		}
	}
	out["metadata"] = m
	return out
}

// sets returns the field sets of typed values.
func sets(tvs []*typed.TypedValue) ([]*fieldpath.Set, error) {
	out := make([]*fieldpath.Set, len(tvs))
	for i, tv := range tvs {
		s, err := tv.ToFieldSet()
		if err != nil {
			return nil, fmt.Errorf("computing field set: %w", err)
		}
		out[i] = s
	}
	return out, nil
}
