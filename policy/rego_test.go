package policy

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"
)

// TestRegoRules runs the opa test-style tests of the bundled rules
// (policy/rules/*_test.rego), one subtest per Rego test.
func TestRegoRules(t *testing.T) {
	files, err := bundledModules(true)
	if err != nil {
		t.Fatal(err)
	}
	modules, problems := parseModules(files)
	if len(problems) > 0 {
		t.Fatalf("parsing rules: %v", (&LoadError{Problems: problems}).Error())
	}
	compiler := ast.NewCompiler().WithCapabilities(capabilities()).WithDefaultRegoVersion(ast.RegoV1)
	results, err := tester.NewRunner().
		SetCompiler(compiler).
		SetModules(modules).
		RaiseBuiltinErrors(true).
		SetParallel(1).
		RunTests(t.Context(), nil)
	if err != nil {
		t.Fatalf("running Rego tests: %v", err)
	}
	n := 0
	for r := range results {
		n++
		t.Run(r.Package+"."+r.Name, func(t *testing.T) {
			if !r.Pass() {
				t.Errorf("%s:%d: %s", r.Location.File, r.Location.Row, r.String())
			}
		})
	}
	if n == 0 {
		t.Fatal("no Rego tests ran")
	}
}
