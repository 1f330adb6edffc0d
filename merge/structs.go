package merge

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// wholeStruct returns the shortest prefix of p that names a struct field
// (not a map key, not a list element) whose value is a struct of the
// kind's schema and of which known has nothing, or p itself. A struct that
// a write added whole is one orphan: the server defaulted its siblings
// when it was created (a HorizontalPodAutoscaler's spec.behavior gets
// scaleUp, scaleDown and their policies from one stabilization window),
// and removing a defaulted part alone would only bring the default back.
// Map keys (labels, annotations, a ConfigMap's data) stay separate fields;
// so does everything of a kind without a schema (tv nil, or a deduced
// schema, which knows no structs). A struct that existed empty before
// (existed: a manager holds it as an empty value, such as the server's
// resources: {} of a container that kubectl create owns) was not added
// whole: what was put in it stays separate fields.
func wholeStruct(p Path, tv *typed.TypedValue, known *fieldpath.Set, existed func(fieldpath.Path) bool) Path {
	if tv == nil {
		return p
	}
	s, atom := tv.Schema(), resolve(tv.Schema(), tv.TypeRef())
	for i, pe := range p {
		parentIsStruct := isStruct(atom)
		atom = child(s, atom, pe)
		if atom == nil {
			return p
		}
		if i == 0 || pe.FieldName == nil || !parentIsStruct || !isStruct(atom) {
			continue
		}
		prefix := fieldpath.Path(p[:i+1])
		if !known.Has(prefix) && knownUnder(known, prefix).Empty() && (existed == nil || !existed(prefix)) {
			return p[:i+1].Append()
		}
	}
	return p
}

// knownUnder returns the part of known below prefix.
func knownUnder(known *fieldpath.Set, prefix fieldpath.Path) *fieldpath.Set {
	cur := known
	for _, pe := range prefix {
		cur = cur.WithPrefix(pe)
	}
	return cur
}

// isStruct reports whether atom is a struct: a map with named fields.
func isStruct(atom *schema.Atom) bool {
	if atom == nil || atom.Map == nil || len(atom.Fields) == 0 {
		return false
	}
	el := atom.Map.ElementType
	return el.NamedType == nil && el.Inlined.Map == nil && el.Inlined.List == nil && el.Inlined.Scalar == nil
}

func resolve(s *schema.Schema, tr schema.TypeRef) *schema.Atom {
	atom, ok := s.Resolve(tr)
	if !ok {
		return nil
	}
	return &atom
}

// child is the type of element pe of a value of type atom, or nil.
func child(s *schema.Schema, atom *schema.Atom, pe fieldpath.PathElement) *schema.Atom {
	switch {
	case atom == nil:
		return nil
	case pe.FieldName != nil && atom.Map != nil:
		if sf, ok := atom.FindField(*pe.FieldName); ok {
			return resolve(s, sf.Type)
		}
		return resolve(s, atom.Map.ElementType)
	case pe.FieldName == nil && atom.List != nil:
		return resolve(s, atom.List.ElementType)
	}
	return nil
}

// granularIn returns whether the value at a path of tv is, by tv's schema,
// a struct or a map or list that is not atomic: one whose fields managers
// own one by one (see contentOwners). Nil for a nil tv; false for a path
// the schema does not know or whose type takes any shape.
func granularIn(tv *typed.TypedValue) func(fieldpath.Path) bool {
	if tv == nil {
		return nil
	}
	s, root := tv.Schema(), resolve(tv.Schema(), tv.TypeRef())
	return func(p fieldpath.Path) bool {
		atom := root
		for _, pe := range p {
			atom = child(s, atom, pe)
		}
		switch {
		case atom == nil || atom.Scalar != nil:
			// Unknown, or a value of any shape: a deduced schema's
			// (a custom resource without one) is a scalar too.
			return false
		case atom.Map != nil:
			return atom.Map.ElementRelationship != schema.Atomic
		case atom.List != nil:
			return atom.List.ElementRelationship != schema.Atomic
		}
		return false
	}
}
