package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// snake writes a Go name in snake_case: AnalyzeClientSideApply is
// analyze_client_side_apply.
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Each entry point of merge (an exported function or method named Apply…
// or Analyze…) is in the file named after it, so that a reader finds it
// from its name.
func TestMergeEntryPointsLiveInTheirFile(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("../../merge/*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			name := fn.Name.Name
			if !strings.HasPrefix(name, "Apply") && !strings.HasPrefix(name, "Analyze") {
				continue
			}
			found++
			if want := snake(name) + ".go"; filepath.Base(path) != want {
				t.Errorf("merge.%s is in merge/%s, want merge/%s", name, filepath.Base(path), want)
			}
		}
	}
	if found == 0 {
		t.Error("found no entry point of merge")
	}
}
