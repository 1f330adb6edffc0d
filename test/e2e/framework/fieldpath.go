package framework

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// segment is one step of a FieldPath: a struct field or map key, or a list
// element picked by the value of its name.
type segment struct {
	key     string
	element bool
}

// FieldPath addresses one field of an object decoded from JSON. It renders
// in kubectl's notation, as apply-hygiene's messages print paths (see
// docs/rules.md): spec.template.spec.containers[name=app].env[name=A],
// spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt].
type FieldPath []segment

// Path returns the FieldPath of nested fields or map keys.
func Path(keys ...string) FieldPath {
	p := make(FieldPath, 0, len(keys))
	for _, k := range keys {
		p = append(p, segment{key: k})
	}
	return p
}

// Key returns p followed by a field or map key.
func (p FieldPath) Key(k string) FieldPath {
	return append(append(FieldPath{}, p...), segment{key: k})
}

// Named returns p, a list keyed by name, followed by its element name.
func (p FieldPath) Named(name string) FieldPath {
	return append(append(FieldPath{}, p...), segment{key: name, element: true})
}

// Well-known paths of workloads.
var (
	TemplatePath   = Path("spec", "template")
	ContainersPath = Path("spec", "template", "spec", "containers")
	ReplicasPath   = Path("spec", "replicas")
	SpecPath       = Path("spec")
	GenerationPath = Path("metadata", "generation")
)

// String renders p in kubectl's notation.
func (p FieldPath) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.element:
			b.WriteString("[name=" + renderName(s.key) + "]")
		case isIdent(s.key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		default:
			b.WriteString("[" + renderKey(s.key) + "]")
		}
	}
	return b.String()
}

// isIdent reports whether a key is written after a dot.
func isIdent(s string) bool {
	if s == "" || isDigits(s) {
		return false
	}
	for _, r := range s {
		ok := r == '_' || r == '-' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

const specialChars = "[]=,\"\\"

// renderKey writes a map key in brackets, quoted when it could be misread.
func renderKey(s string) string {
	if s == "" || isDigits(s) || strings.ContainsAny(s, specialChars) || strings.TrimSpace(s) != s {
		return quote(s)
	}
	return s
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// renderName writes an element's name, quoted when it could read as
// another JSON scalar.
func renderName(s string) string {
	if s == "" || strings.ContainsAny(s, specialChars) || strings.TrimSpace(s) != s || readsAsScalar(s) {
		return quote(s)
	}
	return s
}

func readsAsScalar(s string) bool {
	switch s {
	case "true", "false", "null":
		return true
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || s[0] == '-' || (s[0] >= '0' && s[0] <= '9')
}

func quote(s string) string {
	out, _ := json.Marshal(s) // marshalling a string cannot fail
	return string(out)
}

// Lookup returns the value at p in obj, and whether it is there.
func (p FieldPath) Lookup(obj any) (any, bool) {
	cur := obj
	for _, s := range p {
		if s.element {
			el, ok := element(cur, s.key)
			if !ok {
				return nil, false
			}
			cur = el
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[s.key]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// element returns the element of a list whose name is name.
func element(list any, name string) (any, bool) {
	items, _ := list.([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m["name"] == name {
			return m, true
		}
	}
	return nil, false
}

// SameAt reports whether a and b hold the same value at p, or both none.
func SameAt(p FieldPath, a, b any) bool {
	va, oka := p.Lookup(a)
	vb, okb := p.Lookup(b)
	return oka == okb && cmp.Equal(va, vb)
}

// namedLists are the pod-template lists that strategic merge patch and
// apply-hygiene key by name; every other list is compared as a whole.
var namedLists = map[string]bool{
	"containers": true, "initContainers": true, "ephemeralContainers": true,
	"env": true, "volumes": true,
}

// ChangedPaths lists the fields that differ between a and b under p: map
// keys and named list elements that only one side has, and values that
// differ, as a strategic merge patch between them would address them.
func ChangedPaths(p FieldPath, a, b any) []FieldPath {
	if cmp.Equal(a, b) {
		return nil
	}
	ma, oka := a.(map[string]any)
	mb, okb := b.(map[string]any)
	if oka && okb {
		var out []FieldPath
		for _, k := range unionKeys(ma, mb) {
			out = append(out, changedChild(p.Key(k), ma, mb, k)...)
		}
		return out
	}
	if len(p) > 0 && namedLists[p[len(p)-1].key] && !p[len(p)-1].element {
		return changedElements(p, a, b)
	}
	return []FieldPath{p}
}

// changedChild compares the key k of two maps.
func changedChild(p FieldPath, a, b map[string]any, k string) []FieldPath {
	va, oka := a[k]
	vb, okb := b[k]
	if oka != okb {
		return []FieldPath{p}
	}
	return ChangedPaths(p, va, vb)
}

// changedElements compares two lists keyed by name.
func changedElements(p FieldPath, a, b any) []FieldPath {
	names := map[string]bool{}
	for _, list := range []any{a, b} {
		items, _ := list.([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				if n, ok := m["name"].(string); ok {
					names[n] = true
				}
			}
		}
	}
	var out []FieldPath
	for _, n := range sortedKeys(names) {
		ea, oka := element(a, n)
		eb, okb := element(b, n)
		if oka != okb {
			out = append(out, p.Named(n))
			continue
		}
		out = append(out, ChangedPaths(p.Named(n), ea, eb)...)
	}
	return out
}

func unionKeys(a, b map[string]any) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return sortedKeys(keys)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Element reports whether p ends at an element of a list keyed by name.
func (p FieldPath) Element() bool { return len(p) > 0 && p[len(p)-1].element }

// Delete removes the field at p from obj and reports whether it was
// there. It removes fields and map keys only, never a list element.
func (p FieldPath) Delete(obj any) bool {
	if len(p) == 0 || p.Element() {
		return false
	}
	parent, _ := p[:len(p)-1].Lookup(obj)
	m, _ := parent.(map[string]any)
	if _, ok := m[p[len(p)-1].key]; !ok {
		return false
	}
	delete(m, p[len(p)-1].key)
	return true
}
