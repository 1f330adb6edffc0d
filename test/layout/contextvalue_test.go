package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoContextValuesOnTheRequestPath fails when product code on the
// admission request's path (the webhook transport and the review core)
// calls context.WithValue: the state of a call travels in an explicit
// value (webhook's call), so that a reader can follow a request without
// looking for who put what in its context. The logger controller-runtime
// keeps in the context (log.IntoContext) is no call of this code's.
func TestNoContextValuesOnTheRequestPath(t *testing.T) {
	tests := map[string]struct{ dir string }{
		"the webhook transport": {dir: "webhook"},
		"the review core":       {dir: "internal/review"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join("../..", tc.dir, "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			if len(files) == 0 {
				t.Fatalf("no Go files in %s", tc.dir)
			}
			fset := token.NewFileSet()
			for _, path := range files {
				if strings.HasSuffix(path, "_test.go") {
					continue
				}
				f, err := parser.ParseFile(fset, path, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, at := range withValueCalls(f) {
					t.Errorf("%s: context.WithValue on the request path; pass the call's state in a value", fset.Position(at))
				}
			}
		})
	}
}

// withValueCalls returns where f calls WithValue of the package it
// imports as "context", under whatever name.
func withValueCalls(f *ast.File) []token.Pos {
	name := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"context"` {
			name = "context"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var at []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "WithValue" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == name {
			at = append(at, sel.Pos())
		}
		return true
	})
	return at
}
