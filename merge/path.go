package merge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Path is a field path in kubectl's notation, as printed in messages:
// struct fields and simple map keys joined by dots, list elements by their
// merge key in brackets, map keys that are not simple names in brackets:
//
//	spec.template.spec.containers[name=nginx].env[name=A]
//	spec.template.spec.containers[name=nginx].ports[containerPort=80,protocol=TCP]
//	metadata.annotations[kubectl.kubernetes.io/restartedAt]
//	metadata.finalizers[=example.com/protect]
//
// A Path is the structured-merge-diff path that server-side apply and
// metadata.managedFields use, so it converts to and from fieldpath.Path.
// String and ParsePath round-trip.
type Path fieldpath.Path

func fieldName(s string) fieldpath.PathElement { return fieldpath.PathElement{FieldName: &s} }

// FieldPath returns p as a structured-merge-diff path.
func (p Path) FieldPath() fieldpath.Path { return fieldpath.Path(p) }

// String renders p in kubectl's notation.
func (p Path) String() string {
	var b strings.Builder
	for i, pe := range p {
		writeElement(&b, pe, i == 0)
	}
	return b.String()
}

// MarshalText renders p with String, so Paths are JSON strings.
func (p Path) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses text with ParsePath.
func (p *Path) UnmarshalText(text []byte) error {
	parsed, err := ParsePath(string(text))
	if err != nil {
		return err
	}
	*p = parsed
	return nil
}

// Compare orders paths the way structured-merge-diff orders them.
func (p Path) Compare(q Path) int { return fieldpath.Path(p).Compare(fieldpath.Path(q)) }

// Append returns a new path with pe added at the end.
func (p Path) Append(pe ...fieldpath.PathElement) Path {
	out := make(Path, 0, len(p)+len(pe))
	return append(append(out, p...), pe...)
}

func writeElement(b *strings.Builder, pe fieldpath.PathElement, first bool) {
	switch {
	case pe.FieldName != nil:
		name := *pe.FieldName
		if isIdent(name) {
			if !first {
				b.WriteByte('.')
			}
			b.WriteString(name)
			return
		}
		b.WriteByte('[')
		b.WriteString(renderMapKey(name))
		b.WriteByte(']')
	case pe.Key != nil:
		b.WriteByte('[')
		for i, f := range *pe.Key {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f.Name)
			b.WriteByte('=')
			b.WriteString(renderScalar(f.Value.Unstructured()))
		}
		b.WriteByte(']')
	case pe.Value != nil:
		b.WriteString("[=")
		b.WriteString(renderScalar((*pe.Value).Unstructured()))
		b.WriteByte(']')
	case pe.Index != nil:
		fmt.Fprintf(b, "[%d]", *pe.Index)
	}
}

// isIdent reports whether a field name can be written after a dot.
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

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

const specialChars = "[]=,\"\\"

func renderMapKey(s string) string {
	if s == "" || isDigits(s) || strings.ContainsAny(s, specialChars) || strings.TrimSpace(s) != s {
		return quote(s)
	}
	return s
}

func renderScalar(v any) string {
	s, ok := v.(string)
	if !ok {
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(out)
	}
	if s == "" || strings.ContainsAny(s, specialChars) || strings.TrimSpace(s) != s || parsesAsJSONScalar(s) {
		return quote(s)
	}
	return s
}

func quote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return strings.TrimSuffix(buf.String(), "\n")
}

func parsesAsJSONScalar(s string) bool {
	switch s {
	case "true", "false", "null":
		return true
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || strings.HasPrefix(s, "-") || (s[0] >= '0' && s[0] <= '9')
}

// ParsePath parses a path written in kubectl's notation (see Path).
func ParsePath(s string) (Path, error) { return parsePath(s, false) }

// parsePath parses s; with wildcard, a field written "*" is allowed (see
// ParsePattern).
func parsePath(s string, wildcard bool) (Path, error) {
	var p Path
	rest := s
	for rest != "" {
		var pe fieldpath.PathElement
		var err error
		switch {
		case rest[0] == '[':
			pe, rest, err = parseBracket(rest)
		case rest[0] == '.' && len(p) > 0:
			pe, rest, err = parseIdent(rest[1:], wildcard)
		case len(p) == 0:
			pe, rest, err = parseIdent(rest, wildcard)
		default:
			err = fmt.Errorf("unexpected %q", rest[0])
		}
		if err != nil {
			return nil, fmt.Errorf("parsing path %q: %w", s, err)
		}
		p = append(p, pe)
	}
	return p, nil
}

func parseIdent(s string, wildcard bool) (fieldpath.PathElement, string, error) {
	end := strings.IndexAny(s, ".[")
	if end < 0 {
		end = len(s)
	}
	name := s[:end]
	if !isIdent(name) && (!wildcard || name != Wildcard) {
		return fieldpath.PathElement{}, "", fmt.Errorf("invalid field name %q", name)
	}
	return fieldpath.PathElement{FieldName: &name}, s[end:], nil
}

// parseBracket parses "[...]" at the start of s.
func parseBracket(s string) (fieldpath.PathElement, string, error) {
	end, err := closingBracket(s)
	if err != nil {
		return fieldpath.PathElement{}, "", err
	}
	content, rest := s[1:end], s[end+1:]
	pe, err := parseBracketContent(content)
	return pe, rest, err
}

func closingBracket(s string) (int, error) {
	if i := indexOutsideQuotes(s[1:], ']'); i >= 0 {
		return i + 1, nil
	}
	return 0, fmt.Errorf("unterminated %q", s)
}

func parseBracketContent(c string) (fieldpath.PathElement, error) {
	switch {
	case c == "":
		return fieldpath.PathElement{}, fmt.Errorf("empty brackets")
	case c[0] == '"':
		var name string
		if err := json.Unmarshal([]byte(c), &name); err != nil {
			return fieldpath.PathElement{}, fmt.Errorf("invalid quoted key %s", c)
		}
		return fieldpath.PathElement{FieldName: &name}, nil
	case c[0] == '=':
		v, err := parseScalar(c[1:])
		if err != nil {
			return fieldpath.PathElement{}, err
		}
		val := value.NewValueInterface(v)
		return fieldpath.PathElement{Value: &val}, nil
	case isDigits(c):
		i, err := strconv.Atoi(c)
		if err != nil {
			return fieldpath.PathElement{}, fmt.Errorf("invalid index %s", c)
		}
		return fieldpath.PathElement{Index: &i}, nil
	case strings.Contains(c, "="):
		return parseKey(c)
	}
	name := c
	return fieldpath.PathElement{FieldName: &name}, nil
}

func parseKey(c string) (fieldpath.PathElement, error) {
	var fl value.FieldList
	for _, part := range splitOutsideQuotes(c, ',') {
		name, raw, ok := strings.Cut(part, "=")
		if !ok || !isIdent(name) {
			return fieldpath.PathElement{}, fmt.Errorf("invalid key %q", part)
		}
		v, err := parseScalar(raw)
		if err != nil {
			return fieldpath.PathElement{}, err
		}
		fl = append(fl, value.Field{Name: name, Value: value.NewValueInterface(v)})
	}
	fl.Sort()
	return fieldpath.PathElement{Key: &fl}, nil
}

func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
	for {
		i := indexOutsideQuotes(s, sep)
		if i < 0 {
			return append(parts, s)
		}
		parts = append(parts, s[:i])
		s = s[i+1:]
	}
}

// indexOutsideQuotes returns the index of the first c in s that stands
// outside a double-quoted string (in which a backslash escapes the next
// byte), or -1.
func indexOutsideQuotes(s string, c byte) int {
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch {
		case inQuote && s[i] == '\\':
			i++
		case s[i] == '"':
			inQuote = !inQuote
		case !inQuote && s[i] == c:
			return i
		}
	}
	return -1
}

// parseScalar reads a key value: JSON when it parses as a JSON scalar,
// otherwise a bare string.
func parseScalar(s string) (any, error) {
	if s == "" {
		return nil, fmt.Errorf("empty value")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		if s[0] == '"' {
			return nil, fmt.Errorf("invalid quoted value %s", s)
		}
		return s, nil
	}
	switch v.(type) {
	case map[string]any, []any:
		return s, nil
	}
	return normalizeNumber(v), nil
}

func normalizeNumber(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	f, _ := n.Float64()
	return f
}

// patternOf renders p with every list element as [*].
func patternOf(p Path) string {
	var b strings.Builder
	for i, pe := range p {
		if pe.FieldName == nil {
			b.WriteString("[*]")
			continue
		}
		writeElement(&b, pe, i == 0)
	}
	return b.String()
}
