package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// The audit writes a decision's patch only when a bundled rule made it
// (Decision.Bundled): a user policy's patch is the mutating pass's to
// carry out. The engine knows where a decision came from by the package
// that decided it, so no user module may define anything in a bundled
// rule's package (applyhygiene.rules.<rule> of policy/rules), in
// applyhygiene.lib, whose helpers those rules trust, or in
// applyhygiene.config, the chart's configuration; users keep their own
// packages under applyhygiene.rules and package applyhygiene itself.

// libPath is the package of the bundled rules' helpers.
var libPath = ast.MustParseRef("data.applyhygiene.lib")

// configPath is the configuration (policy.Config, from the chart's
// values) that the engine stores: a module there would change what the
// platform team allowed (an action, the audit's fix) behind its back.
var configPath = ast.MustParseRef("data.applyhygiene.config")

// rulesPath is the package under which each bundled rule has its own.
var rulesPath = ast.MustParseRef("data.applyhygiene.rules")

// bundledRules returns the names of the bundled rules' packages
// (orphaned_field for applyhygiene.rules.orphaned_field), sorted.
func bundledRules(modules map[string]*ast.Module, files []moduleFile) []string {
	var names []string
	for _, f := range files {
		m := modules[f.name]
		if m == nil {
			continue
		}
		p := m.Package.Path
		if len(p) == len(rulesPath)+1 && p.HasPrefix(rulesPath) {
			if name, ok := p[len(rulesPath)].Value.(ast.String); ok {
				names = append(names, string(name))
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// reservedPaths are the documents that only bundled modules may define:
// applyhygiene.lib, applyhygiene.config (which none defines: it is the
// engine's data) and the package of each bundled rule.
func reservedPaths(rules []string) []ast.Ref {
	out := []ast.Ref{libPath, configPath}
	for _, name := range rules {
		out = append(out, rulesPath.Append(ast.StringTerm(name)))
	}
	return out
}

// reservedProblems returns a problem for each user module that defines
// something in a reserved document (reservedPaths): its package is one
// or lies inside one (inside), or one of its rules' paths (package and rule head,
// a variable in it matching any key) may lead into one, as
// `rules.orphaned_field.decisions contains d` in package applyhygiene
// would.
func reservedProblems(modules map[string]*ast.Module, user []moduleFile, reserved []ast.Ref) []Problem {
	var problems []Problem
	for _, f := range user {
		m := modules[f.name]
		if m == nil {
			continue
		}
		if r, ok := inside(m.Package.Path, reserved); ok {
			problems = append(problems, reservedProblem(f.name, m.Package.Location, "package "+packageName(m.Package.Path), r))
			continue
		}
		for _, rule := range m.Rules {
			if r, ok := reaches(rule.Ref(), reserved); ok {
				problems = append(problems, reservedProblem(f.name, rule.Location, "rule "+rule.Head.Ref().String(), r))
			}
		}
	}
	return problems
}

// inside returns the reserved path that the package pkg is or lies in;
// false when none.
func inside(pkg ast.Ref, reserved []ast.Ref) (ast.Ref, bool) {
	for _, r := range reserved {
		if len(pkg) >= len(r) && overlaps(pkg, r) {
			return r, true
		}
	}
	return nil, false
}

// reaches returns the reserved path that p may define something in: one
// that p starts with or that starts with p, a variable of p (or a
// non-string key) matching any key; false when p diverges from each.
func reaches(p ast.Ref, reserved []ast.Ref) (ast.Ref, bool) {
	for _, r := range reserved {
		if overlaps(p, r) {
			return r, true
		}
	}
	return nil, false
}

// overlaps reports whether the refs a and b agree on every position both
// have, a non-ground term matching anything.
func overlaps(a, b ast.Ref) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if !a[i].IsGround() || !b[i].IsGround() {
			continue
		}
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// reservedProblem says that what (a package or a rule) of file, at loc,
// defines something in the reserved document r.
func reservedProblem(file string, loc *ast.Location, what string, r ast.Ref) Problem {
	p := Problem{File: file, Message: fmt.Sprintf("%s defines data in package %s, which is reserved for apply-hygiene's bundled rules, their helpers and the configuration of the chart's values: write your rules in a package of your own (package applyhygiene.rules.<your_rule>, or package applyhygiene adding to decisions)", what, packageName(r))}
	if loc != nil {
		p.Line = loc.Row
	}
	return p
}

// packageName is data.applyhygiene.lib written as in a package clause,
// applyhygiene.lib.
func packageName(r ast.Ref) string {
	return strings.TrimPrefix(r.String(), "data.")
}

// provenanceQuery is the query that the engine evaluates for the audit:
// the decisions of the bundled rules' packages (bundled) and every other
// decision (others), so that each decision is decoded once and knows
// where it came from.
func provenanceQuery(rules []string) string {
	quoted := make([]string, len(rules))
	for i, name := range rules {
		quoted[i] = strconv.Quote(name)
	}
	return fmt.Sprintf("bundled := {d | some n in {%s}; some d in data.applyhygiene.rules[n].decisions}; others := %s - bundled",
		strings.Join(quoted, ", "), Query)
}
