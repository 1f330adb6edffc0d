package merge

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// SchemaSource gives the structural schema of kinds that have no Go type,
// such as custom resources, as a type converter: with it their field sets
// follow the schema (a list with x-kubernetes-list-type: map has one
// element per key, so a fact names spec.routes[name=canary]) instead of
// being deduced from the object (every list atomic). The Analyzer asks it
// for every kind its scheme does not know, on every conversion: a source
// whose schemas change (a CRD updated on the API server) hands out the new
// converter, and the next analysis uses it.
//
// TypeConverter returns false when it has no schema for gvk; the kind then
// gets deduced field sets, as without a source. It must be safe for
// concurrent use and should answer from memory: it is called within an
// analysis.
type SchemaSource interface {
	TypeConverter(gvk schema.GroupVersionKind) (managedfields.TypeConverter, bool)
}

// SchemaSourceFunc adapts a function to a SchemaSource.
type SchemaSourceFunc func(gvk schema.GroupVersionKind) (managedfields.TypeConverter, bool)

// TypeConverter calls f.
func (f SchemaSourceFunc) TypeConverter(gvk schema.GroupVersionKind) (managedfields.TypeConverter, bool) {
	return f(gvk)
}

var _ SchemaSource = SchemaSourceFunc(nil)

// converterFor returns the type converter of gvk: the scheme's for a kind
// with a Go type, the SchemaSource's for another kind it has a schema for,
// else the scheme's (whose conversion then fails, and fieldSets deduces).
// fromSource is true for the SchemaSource's: the cache of last-applied
// holds values typed by the scheme's only (see convertTyped).
func (a *Analyzer) converterFor(gvk schema.GroupVersionKind) (tc managedfields.TypeConverter, fromSource bool) {
	if a.schemas == nil || gvk.Empty() || a.scheme.Recognizes(gvk) {
		return a.typed, false
	}
	if tc, ok := a.schemas.TypeConverter(gvk); ok && tc != nil {
		return tc, true
	}
	return a.typed, false
}
