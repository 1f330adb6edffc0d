package chart_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// value is one documented entry of values.yaml: a key whose head comment
// starts with "# --". Keys without such a comment must be maps of
// documented values.
type value struct {
	path, typ, def, doc string
}

func readValues(t *testing.T) []value {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "values.yaml"))
	if err != nil {
		t.Fatalf("reading values.yaml: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parsing values.yaml: %v", err)
	}
	var vals []value
	var undocumented []string
	var walk func(prefix string, m *yaml.Node)
	walk = func(prefix string, m *yaml.Node) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			path := prefix + k.Value
			comment := docComment(k.HeadComment)
			switch {
			case comment != "":
				vals = append(vals, value{path: path, typ: typeOf(v), def: defaultOf(t, v), doc: comment})
			case v.Kind == yaml.MappingNode && len(v.Content) > 0:
				walk(path+".", v)
			default:
				undocumented = append(undocumented, path)
			}
		}
	}
	walk("", doc.Content[0])
	if len(undocumented) > 0 {
		t.Errorf("values without a \"# --\" comment in values.yaml: %s", strings.Join(undocumented, ", "))
	}
	return vals
}

// docComment is the text of the last "# --" paragraph of a head comment.
func docComment(head string) string {
	i := strings.LastIndex(head, "# --")
	if i < 0 {
		return ""
	}
	var words []string
	for line := range strings.SplitSeq(head[i+len("# --"):], "\n") {
		words = append(words, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#")))
	}
	return strings.Join(strings.Fields(strings.Join(words, " ")), " ")
}

func typeOf(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "object"
	case n.Kind == yaml.SequenceNode:
		return "list"
	case n.Tag == "!!int":
		return "int"
	case n.Tag == "!!float":
		return "float"
	case n.Tag == "!!bool":
		return "bool"
	default:
		return "string"
	}
}

func defaultOf(t *testing.T, n *yaml.Node) string {
	t.Helper()
	var v any
	if err := n.Decode(&v); err != nil {
		t.Fatalf("decoding a default: %v", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding a default: %v", err)
	}
	return string(b)
}

func TestEveryValueIsDocumentedAndInTheSchema(t *testing.T) {
	vals := readValues(t)
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "values.schema.json"))
	if err != nil {
		t.Fatalf("reading values.schema.json: %v", err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("parsing values.schema.json: %v", err)
	}
	var inSchema []string
	var walk func(prefix string, s map[string]any)
	walk = func(prefix string, s map[string]any) {
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 || prefix == "policy.rules." {
			inSchema = append(inSchema, strings.TrimSuffix(prefix, "."))
			return
		}
		for k, sub := range props {
			walk(prefix+k+".", sub.(map[string]any))
		}
	}
	walk("", schema)
	var inValues []string
	for _, v := range vals {
		inValues = append(inValues, v.path)
	}
	slices.Sort(inSchema)
	slices.Sort(inValues)
	if diff := cmp.Diff(inValues, inSchema); diff != "" {
		t.Errorf("values.yaml and values.schema.json disagree (-values.yaml +schema):\n%s", diff)
	}
}

const (
	tableStart = "<!-- values:start (generated from values.yaml by `go test ./test/chart -update`) -->"
	tableEnd   = "<!-- values:end -->"
)

func TestReadmeValuesTableIsCurrent(t *testing.T) {
	var table strings.Builder
	table.WriteString("| Key | Type | Default | Description |\n|---|---|---|---|\n")
	for _, v := range readValues(t) {
		fmt.Fprintf(&table, "| `%s` | %s | `%s` | %s |\n", v.path, v.typ, v.def, strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(v.doc))
	}
	path := filepath.Join(chartDir(t), "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the chart README: %v", err)
	}
	before, rest, ok := strings.Cut(string(readme), tableStart)
	_, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok || !ok2 {
		t.Fatalf("the chart README lacks the markers %q and %q", tableStart, tableEnd)
	}
	want := before + tableStart + "\n" + table.String() + tableEnd + after
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatalf("writing the chart README: %v", err)
		}
		return
	}
	if diff := cmp.Diff(want, string(readme)); diff != "" {
		t.Errorf("the README values table is stale; regenerate with -update (-want +got):\n%s", diff)
	}
}
