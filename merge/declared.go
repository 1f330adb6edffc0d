package merge

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Wildcard is the field of a Pattern that stands for any one element: a
// field, a map key or a list element (`containers[*].image`,
// `metadata.annotations.*`).
const Wildcard = "*"

// Pattern is a field path in kubectl's notation (see Path) in which a field
// written Wildcard matches any one element. A pattern covers the fields it
// matches and everything beneath them: `spec.template.spec.containers[*].image`
// covers the image of every container, `metadata.annotations[example.com/a]`
// that annotation, `spec.replicas` the replica count.
type Pattern struct {
	path Path
}

// ParsePattern parses a pattern written as messages print paths, with
// Wildcard for any element. A map key that is not a simple name goes in
// brackets, as messages print it (`metadata.annotations[sidecar.istio.io/status]`):
// a dotted annotation or label key after `metadata.annotations.` is refused
// rather than read as nested fields that never match.
func ParsePattern(s string) (Pattern, error) {
	if s == "" {
		return Pattern{}, fmt.Errorf("empty path")
	}
	p, err := parsePath(s, true)
	if err != nil {
		return Pattern{}, err
	}
	if err := checkMetadataKeys(s, p); err != nil {
		return Pattern{}, err
	}
	return Pattern{path: p}, nil
}

// checkMetadataKeys refuses a path that goes on past the key of an
// annotation or label map (whose values are strings).
func checkMetadataKeys(s string, p Path) error {
	for i := 1; i+2 < len(p); i++ {
		prev, cur := p[i-1].FieldName, p[i].FieldName
		if prev == nil || cur == nil || *prev != "metadata" || (*cur != "annotations" && *cur != "labels") {
			continue
		}
		parent := p[:i+1].String()
		return fmt.Errorf("parsing path %q: %s values are strings, so nothing lies beneath a key; write a key with dots or slashes in brackets, as messages print it: %s[example.com/key]", s, parent, parent)
	}
	return nil
}

// PatternFromJSONPointer converts a JSON pointer (RFC 6901), as Argo CD's
// ignoreDifferences.jsonPointers and Flux's driftIgnoreRules.paths write
// them (`/spec/replicas`, `/metadata/annotations/sidecar.istio.io~1status`),
// to a Pattern. A pointer with a list index (`/spec/template/spec/containers/0/image`)
// is refused: apply-hygiene's paths name list elements by their merge key,
// and position 0 of one object is not that of another; write the path with
// Wildcard or the element's key instead.
func PatternFromJSONPointer(ptr string) (Pattern, error) {
	if !strings.HasPrefix(ptr, "/") {
		return Pattern{}, fmt.Errorf("JSON pointer %q: must start with /", ptr)
	}
	var p Path
	for seg := range strings.SplitSeq(ptr[1:], "/") {
		name := strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch {
		case name == "":
			return Pattern{}, fmt.Errorf("JSON pointer %q: empty segment", ptr)
		case name == Wildcard:
			return Pattern{}, fmt.Errorf("JSON pointer %q: segment %q names a key literally called *, as Argo CD and Flux read it; for any key write the path in apply-hygiene's notation, e.g. %s", ptr, name, Pattern{path: p.Append(fieldName(Wildcard))}.String())
		case isDigits(name) || name == "-":
			return Pattern{}, fmt.Errorf("JSON pointer %q: segment %q is a list position, which differs from object to object; write the path in apply-hygiene's notation with [*] or the element's key, e.g. %s", ptr, name, Pattern{path: p.Append(fieldName(Wildcard))}.String())
		}
		p = append(p, fieldName(name))
	}
	return Pattern{path: p}, nil
}

// String renders p as ParsePattern reads it.
func (p Pattern) String() string {
	var b strings.Builder
	for i, pe := range p.path {
		if isWildcard(pe) {
			if i > 0 {
				b.WriteString("[*]")
			} else {
				b.WriteString(Wildcard)
			}
			continue
		}
		writeElement(&b, pe, i == 0)
	}
	return b.String()
}

// MarshalText renders p with String.
func (p Pattern) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// Covers reports whether p matches path or one of the fields that hold it.
func (p Pattern) Covers(path Path) bool {
	if len(p.path) == 0 || len(path) < len(p.path) {
		return false
	}
	for i, pe := range p.path {
		if !isWildcard(pe) && !pe.Equals(path[i]) {
			return false
		}
	}
	return true
}

func isWildcard(pe fieldpath.PathElement) bool {
	return pe.FieldName != nil && *pe.FieldName == Wildcard
}

// Declared says that the fields a pattern covers belong to someone other
// than the manifest: to one field manager, or to the cluster (any writer).
type Declared struct {
	// Pattern is the fields.
	Pattern Pattern
	// Manager is the field manager that owns them; empty for the cluster.
	Manager string
}

// owns reports whether d declares f's field owned: by the cluster, or by
// d.Manager when writer is it (writer's facts) or when managedFields name it
// as every owner of what f's field holds (the other facts: an orphaned
// container that kubectl patch added and whose image alone kubectl set
// image wrote is not kubectl-set's).
func (d Declared) owns(f FieldFact, writer string, byWriter bool) bool {
	if !d.Pattern.Covers(f.Path) {
		return false
	}
	if d.Manager == "" {
		return true
	}
	if byWriter {
		return writer == d.Manager
	}
	return len(f.Owners) > 0 && !slices.ContainsFunc(f.Owners, func(o Owner) bool { return o.Manager != d.Manager })
}

// WithoutDeclared returns a without the facts about fields that ds declare
// owned: no drift, imperative change, change of an applier's field,
// revert, orphan or replicas reset at such a field. A change by the write
// itself (ImperativeChanges, ApplyOwnedChanges) is declared when its writer,
// the write's field manager, is the declared manager; the other facts when
// metadata.managedFields name that manager among the field's owners. A
// cluster declaration covers any writer. Defaulted dependents and rollback
// facts stay: they are about what the server accepts and what an undo
// restored, not about who writes a field. a itself is returned, unchanged,
// when nothing is declared; otherwise a copy, and a is left as it was.
func (a *Analysis) WithoutDeclared(writer string, ds []Declared) *Analysis {
	if a == nil || len(ds) == 0 {
		return a
	}
	declared := func(byWriter bool) func(FieldFact) bool {
		return func(f FieldFact) bool {
			return slices.ContainsFunc(ds, func(d Declared) bool { return d.owns(f, writer, byWriter) })
		}
	}
	byWriter, byOwners := declared(true), declared(false)
	out := *a
	changed := false
	drop := func(facts []FieldFact, is func(FieldFact) bool) []FieldFact {
		if !slices.ContainsFunc(facts, is) {
			return facts
		}
		changed = true
		return slices.DeleteFunc(slices.Clone(facts), is)
	}
	out.Drift = drop(a.Drift, byOwners)
	out.ImperativeChanges = drop(a.ImperativeChanges, byWriter)
	out.ApplyOwnedChanges = drop(a.ApplyOwnedChanges, byWriter)
	out.Reverts = drop(a.Reverts, byOwners)
	out.Orphans = drop(a.Orphans, byOwners)
	if a.ReplicasReset != nil && byOwners(*a.ReplicasReset) {
		out.ReplicasReset, changed = nil, true
	}
	if !changed {
		return a
	}
	return &out
}
