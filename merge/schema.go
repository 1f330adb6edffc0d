package merge

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
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

// listsReplaced reports whether kubectl's apply of obj's kind replaces
// lists whole: a JSON merge patch, for a kind without a Go type. Field
// sets from a schema (WithSchemas) still name the elements of such lists
// (spec.routes[name=canary]), and what apply does to an element is then
// decided by the list around it (inList); deduced field sets stop at the
// list.
func (a *Analyzer) listsReplaced(obj *unstructured.Unstructured) bool {
	return !a.scheme.Recognizes(obj.GroupVersionKind())
}

// inList reports whether p runs into an element of a list that obj has: a
// JSON merge patch that sets that list (as last-applied or the manifest
// has it) replaces the element with the rest of the list.
func inList(obj map[string]any, p Path) bool {
	var cur any = obj
	for _, pe := range p {
		switch v := cur.(type) {
		case []any:
			return true
		case map[string]any:
			if pe.FieldName == nil {
				return false
			}
			next, ok := v[*pe.FieldName]
			if !ok {
				return false
			}
			cur = next
		default:
			return false
		}
	}
	return false
}

// outsideLists drops the facts inside a list that lastApplied has: the
// next apply's JSON merge patch sets that list whole, so a field inside it
// that last-applied lacks is removed, not kept (no orphan).
func outsideLists(lastApplied map[string]any, facts []FieldFact) []FieldFact {
	out := facts[:0:0]
	for _, f := range facts {
		if !inList(lastApplied, f.Path) {
			out = append(out, f)
		}
	}
	return out
}

// declaredOnly drops the facts at a path that the schema of obj's kind
// from the SchemaSource (a CRD's, as the API server publishes it) does not
// declare: the API server prunes such a field from every write of a custom
// resource, so a last-applied that has it (applied with --validate=false,
// or before the CRD dropped the field) differs from live there although
// nobody changed it, and the next apply does not set it back. A kind
// without such a schema keeps every fact: the scheme's Go types may lag
// the server's, and a deduced schema declares everything.
func (a *Analyzer) declaredOnly(obj *unstructured.Unstructured, facts []FieldFact) []FieldFact {
	gvk := obj.GroupVersionKind()
	tc, fromSource := a.converterFor(gvk)
	if !fromSource || len(facts) == 0 {
		return facts
	}
	t, err := tc.ObjectToTyped(withKind(nil, gvk))
	if err != nil {
		return facts
	}
	out := facts[:0:0]
	for _, f := range facts {
		if declared(t.Schema(), t.TypeRef(), f.Path) {
			out = append(out, f)
		}
	}
	return out
}

// declared reports whether the schema sc, from the type tr, declares the
// field at p: each name is a field of its struct or a key of a map (of
// any key: x-kubernetes-preserve-unknown-fields is such a map), and each
// element one of a list.
func declared(sc *smdschema.Schema, tr smdschema.TypeRef, p Path) bool {
	for _, pe := range p {
		atom, ok := sc.Resolve(tr)
		switch {
		case !ok:
			return false
		case pe.FieldName != nil && atom.Map != nil:
			if sf, found := atom.FindField(*pe.FieldName); found {
				tr = sf.Type
			} else {
				tr = atom.Map.ElementType
			}
		case pe.FieldName == nil && atom.List != nil:
			tr = atom.List.ElementType
		default:
			return false
		}
	}
	atom, ok := sc.Resolve(tr)
	return ok && (atom.Scalar != nil || atom.List != nil || atom.Map != nil)
}
