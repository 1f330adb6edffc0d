package policy

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Problem is one error in one policy file.
type Problem struct {
	// File is the module's name: a path, or the name of an in-memory
	// module.
	File string
	// Line is the line of the error; 0 when unknown.
	Line int
	// Message says what is wrong.
	Message string
}

// String renders p as "file:line: message".
func (p Problem) String() string {
	if p.Line == 0 {
		return p.File + ": " + p.Message
	}
	return p.File + ":" + strconv.Itoa(p.Line) + ": " + p.Message
}

// LoadError lists every problem that kept a policy set from loading.
// Reload returns it wrapped; get it with errors.As.
type LoadError struct {
	// Problems are the errors, by file and line.
	Problems []Problem
}

// Error lists the problems on one line.
func (e *LoadError) Error() string {
	texts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		texts[i] = p.String()
	}
	return strings.Join(texts, "; ")
}

// forbiddenBuiltin reports whether policies may not call a builtin: it
// reaches the network, the environment or the runtime. json.match_schema
// and json.verify_schema are out because a schema may $ref a remote URL.
func forbiddenBuiltin(name string) bool {
	switch name {
	case "http.send", "opa.runtime", "providers.aws.sign_req", "json.match_schema", "json.verify_schema":
		return true
	}
	return strings.HasPrefix(name, "net.")
}

// capabilities returns what policies may use: this OPA version's
// builtins, less the forbidden ones, and no network hosts.
func capabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = slices.DeleteFunc(slices.Clone(caps.Builtins), func(b *ast.Builtin) bool {
		return forbiddenBuiltin(b.Name)
	})
	caps.AllowNet = []string{}
	return caps
}

// parseModules parses files as Rego v1.
func parseModules(files []moduleFile) (map[string]*ast.Module, []Problem) {
	modules := make(map[string]*ast.Module, len(files))
	var problems []Problem
	for _, f := range files {
		if _, dup := modules[f.name]; dup {
			problems = append(problems, Problem{File: f.name, Message: "module name used twice"})
			continue
		}
		m, err := ast.ParseModuleWithOpts(f.name, f.text, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			problems = append(problems, astProblems(f.name, err)...)
			continue
		}
		modules[f.name] = m
	}
	return modules, problems
}

// compileModules compiles modules with caps.
func compileModules(modules map[string]*ast.Module, caps *ast.Capabilities) (*ast.Compiler, []Problem) {
	c := ast.NewCompiler().
		WithCapabilities(caps).
		WithDefaultRegoVersion(ast.RegoV1).
		SetErrorLimit(0)
	c.Compile(modules)
	if c.Failed() {
		return nil, astProblems("", c.Errors)
	}
	return c, nil
}

// astProblems converts OPA errors into problems; file names the module
// when an error has no location.
func astProblems(file string, err error) []Problem {
	var errs ast.Errors
	if !errors.As(err, &errs) {
		return []Problem{{File: file, Message: err.Error()}}
	}
	out := make([]Problem, 0, len(errs))
	for _, e := range errs {
		p := Problem{File: file, Message: e.Code + ": " + e.Message}
		if e.Location != nil {
			p.File, p.Line = cmp.Or(e.Location.File, file), e.Location.Row
		}
		if name, ok := strings.CutPrefix(e.Message, "undefined function "); ok && forbiddenBuiltin(name) {
			p.Message += " (apply-hygiene policies may not reach the network, the environment or the runtime)"
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return out
}
