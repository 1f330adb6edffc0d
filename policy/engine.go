package policy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Query is the one document the engine evaluates.
const Query = "data.applyhygiene.decisions"

// Engine evaluates the bundled rules and the user policies against policy
// inputs. It compiles and prepares a policy set once per load; Evaluate is
// safe for concurrent use, also while Reload swaps the set.
type Engine struct {
	opts options
	// ownership is opts.config's, compiled by New.
	ownership ownership
	// mu serializes loads and guards sources.
	mu      sync.Mutex
	sources Sources
	current atomic.Pointer[policySet]
	status  atomic.Pointer[Status]
	skipped atomic.Uint64
}

// policySet is one compiled and prepared set of modules.
type policySet struct {
	version uint64
	modules []string
	query   rego.PreparedEvalQuery
	// audit is the query for the audit's inputs (provenanceQuery): the
	// same decisions, each marked Bundled when a bundled rule's package
	// decided it. Only the audit's fix reads that, so admission pays
	// nothing for it.
	audit rego.PreparedEvalQuery
	// silent are the classifications for which an empty analysis yields
	// no decision (silenceOf); nil with WithFullEvaluation.
	silent []Classification
}

// Status describes the policy set in force and the last load.
type Status struct {
	// Version counts successful loads: 1 after New, one more for every
	// Reload that succeeded.
	Version uint64
	// Modules are the names of the modules in force, sorted.
	Modules []string
	// Silent are the classifications for which the modules in force never
	// decide anything when the analysis is empty (no finding; see
	// Evaluate), in the order of their declaration. Evaluate skips Rego
	// for those inputs. Empty with WithFullEvaluation.
	Silent []Classification
	// Skipped counts the evaluations skipped since New because the set
	// in force was silent on their input (the same count as Skipped).
	Skipped uint64
	// LastError is the error of the last load, nil when it succeeded.
	// The engine keeps serving the previous set meanwhile.
	LastError error
}

// New returns an engine with the bundled rules and the user policies that
// opts name. It fails when the configuration is invalid or a policy does
// not compile.
func New(ctx context.Context, opts ...Option) (*Engine, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if errs := o.config.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("validating policy config: %w", errs.ToAggregate())
	}
	own, _ := compileOwnership(o.config.Ownership)
	e := &Engine{opts: o, ownership: own}
	if err := e.Reload(ctx, o.sources); err != nil {
		return nil, err
	}
	return e, nil
}

// Reload compiles a new policy set from the bundled rules and src, and
// swaps it in. On error (a *LoadError, wrapped, when a module is wrong) it
// keeps serving the previous set. Later reloads by Watch reuse src.
func (e *Engine) Reload(ctx context.Context, src Sources) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sources = src.clone()
	return e.reloadLocked(ctx)
}

// reloadLocked loads e.sources; e.mu is held.
func (e *Engine) reloadLocked(ctx context.Context) error {
	version := uint64(1)
	if cur := e.current.Load(); cur != nil {
		version = cur.version + 1
	}
	set, err := e.load(ctx, version)
	if err != nil {
		e.setStatus(err)
		return fmt.Errorf("loading policies: %w", err)
	}
	e.current.Store(set)
	e.setStatus(nil)
	return nil
}

func (e *Engine) setStatus(err error) {
	st := Status{LastError: err}
	if cur := e.current.Load(); cur != nil {
		st.Version, st.Modules, st.Silent = cur.version, slices.Clone(cur.modules), slices.Clone(cur.silent)
	}
	e.status.Store(&st)
}

// Status returns the version and modules in force and the last load error.
func (e *Engine) Status() Status {
	st := *e.status.Load()
	st.Modules, st.Silent = slices.Clone(st.Modules), slices.Clone(st.Silent)
	st.Skipped = e.Skipped()
	return st
}

// load reads, parses, compiles and prepares the bundled rules and
// e.sources.
func (e *Engine) load(ctx context.Context, version uint64) (*policySet, error) {
	files, err := bundledModules(false)
	if err != nil {
		return nil, err
	}
	user, problems := readSources(e.sources)
	modules, parseProblems := parseModules(append(files, user...))
	rules := bundledRules(modules, files)
	problems = append(append(problems, parseProblems...), reservedProblems(modules, user, reservedPaths(rules))...)
	caps := capabilities()
	// Compile what parsed even after parse errors, to report every file.
	compiler, compileProblems := compileModules(modules, caps)
	if problems = append(problems, compileProblems...); len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	config, err := e.opts.config.document()
	if err != nil {
		return nil, err
	}
	store := inmem.NewFromObject(map[string]any{"applyhygiene": map[string]any{"config": config}})
	query, err := prepare(ctx, Query, compiler, store, caps)
	if err != nil {
		return nil, err
	}
	audit, err := prepare(ctx, provenanceQuery(rules), compiler, store, caps)
	if err != nil {
		return nil, err
	}
	set := &policySet{version: version, modules: sortedNames(modules), query: query, audit: audit}
	if !e.opts.fullEvaluation {
		set.silent = silenceOf(ctx, compiler, store, caps)
	}
	return set, nil
}

func prepare(ctx context.Context, query string, c *ast.Compiler, store storage.Store, caps *ast.Capabilities) (rego.PreparedEvalQuery, error) {
	r := rego.New(
		rego.Query(query),
		rego.Compiler(c),
		rego.Store(store),
		rego.Capabilities(caps),
		rego.StrictBuiltinErrors(true),
	)
	pq, err := r.PrepareForEval(ctx)
	if err != nil {
		return rego.PreparedEvalQuery{}, fmt.Errorf("preparing query: %w", err)
	}
	return pq, nil
}

func sortedNames(modules map[string]*ast.Module) []string {
	names := make([]string, 0, len(modules))
	for name := range modules {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Evaluate returns the decisions of the policy set in force for in,
// sorted by rule, then message. No decision means allow.
//
// The facts about fields that the configuration's ownership rules declare
// owned for in's object are dropped first (OwnershipRule), so that no
// rule, bundled or the user's, sees them; in is not changed.
//
// When in's analysis is empty (none, or one without findings: last-applied
// present and valid and not too large; no imperative change, revert,
// orphan or defaulted dependent, each list empty but not nil; no replicas
// reset, no rollback) and the policy set is silent for in's
// classification (Status.Silent), Evaluate returns no decision without
// running Rego: partial evaluation at load showed that no request,
// namespace, user or drift makes such an input decide anything.
func (e *Engine) Evaluate(ctx context.Context, in *Input) ([]Decision, error) {
	in = e.ownership.apply(in)
	set := e.current.Load()
	if set.silentOn(in) {
		e.skipped.Add(1)
		return []Decision{}, nil
	}
	value, err := inputValue(in)
	if err != nil {
		return nil, fmt.Errorf("encoding policy input: %w", err)
	}
	if in.Classification == Audit {
		return evaluateProvenance(ctx, set, value)
	}
	return evaluateValue(ctx, set, value)
}

// Declared returns the fields that the configuration's ownership rules
// declare owned in an's object (OwnershipRule), the ones Evaluate drops
// the facts about: for a view of the object that leaves them out as the
// rules do, such as merge.Explanation.WithoutDeclared. None when an is nil.
func (e *Engine) Declared(an *merge.Analysis) []merge.Declared {
	if an == nil {
		return nil
	}
	return e.ownership.declared(an)
}

// Skipped counts the evaluations that Evaluate skipped because the policy
// set is silent on their input (see Evaluate), since New.
func (e *Engine) Skipped() uint64 { return e.skipped.Load() }

// evaluateValue evaluates a parsed input with set.
func evaluateValue(ctx context.Context, set *policySet, value ast.Value) ([]Decision, error) {
	rs, err := set.query.Eval(ctx, rego.EvalParsedInput(value))
	if err != nil {
		return nil, fmt.Errorf("evaluating policy set %d: %w", set.version, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return []Decision{}, nil
	}
	ds, err := decodeDecisions(rs[0].Expressions[0].Value)
	if err != nil {
		return nil, fmt.Errorf("decoding decisions of policy set %d: %w", set.version, err)
	}
	return ds, nil
}

// evaluateProvenance evaluates a parsed input with set's audit query:
// the decisions of evaluateValue, those of a bundled rule's package
// marked Bundled.
func evaluateProvenance(ctx context.Context, set *policySet, value ast.Value) ([]Decision, error) {
	rs, err := set.audit.Eval(ctx, rego.EvalParsedInput(value))
	if err != nil {
		return nil, fmt.Errorf("evaluating policy set %d: %w", set.version, err)
	}
	if len(rs) == 0 {
		return []Decision{}, nil
	}
	bundled, err := appendDecisions(nil, rs[0].Bindings["bundled"], true)
	if err != nil {
		return nil, fmt.Errorf("decoding decisions of policy set %d: %w", set.version, err)
	}
	ds, err := appendDecisions(bundled, rs[0].Bindings["others"], false)
	if err != nil {
		return nil, fmt.Errorf("decoding decisions of policy set %d: %w", set.version, err)
	}
	SortDecisions(ds)
	return ds, nil
}
