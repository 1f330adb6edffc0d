package policy

import (
	"context"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// classifications are the classifications of the webhook, in the order of
// their declaration. The engine decides for each of them at load whether
// it may skip evaluation on an empty analysis; an input of any other
// classification (the audit's "audit") is always evaluated.
var classifications = []Classification{
	ClientSideApply, ServerSideApply, Imperative, RolloutUndo,
	RolloutRestart, Scale, SaveConfig, Controller,
}

// emptyAnalysis reports whether a holds no finding: last-applied is present
// and valid and not too large, no imperative change, revert, orphan or
// defaulted dependent (each list empty but not nil, as merge makes them),
// no replicas reset, no rollback, no hand-over and no dropped record. Whatever else a holds is not looked
// at: the object, the operation, the strategy, the sizes and the drift.
// An input without analysis is empty too. Evaluate skips Rego for an
// input whose analysis is empty when the policy set is silent for its
// classification (Status.Silent).
func emptyAnalysis(a *merge.Analysis) bool {
	if a == nil {
		return true
	}
	return a.LastApplied.Status == merge.LastAppliedPresent && a.LastApplied.Error == "" && a.LastApplied.Fault == "" &&
		!a.LastAppliedTooLarge &&
		emptyList(a.ImperativeChanges) && emptyList(a.ApplyOwnedChanges) && a.Appliers != nil && len(a.Appliers) == 0 && emptyList(a.Reverts) && emptyList(a.Orphans) &&
		emptyList(a.DefaultedDependents) &&
		a.ReplicasReset == nil && a.Rollback == nil && a.HandOver == nil && a.DroppedRecord == nil
}

// emptyList reports whether facts is an empty list: Rego sees a nil list as
// null, which a policy may tell from [] (count(null) is an error).
func emptyList(facts []merge.FieldFact) bool { return facts != nil && len(facts) == 0 }

// silentShapes are the inputs that silenceOf evaluates partially for each
// classification: with no analysis, and with an empty one. The known parts
// are exactly what emptyAnalysis checks; everything else is unknown.
var silentShapes = []struct {
	analysis ast.Value
	unknowns []string
}{
	{analysis: nil, unknowns: []string{"input.request", "input.namespace"}},
	{
		analysis: ast.NewObject(
			item("lastApplied", ast.NewObject(item("status", ast.String(merge.LastAppliedPresent)))),
			item("lastAppliedTooLarge", ast.Boolean(false)),
			item("imperativeChanges", ast.NewArray()),
			item("applyOwnedChanges", ast.NewArray()),
			item("appliers", ast.NewArray()),
			item("reverts", ast.NewArray()),
			item("orphans", ast.NewArray()),
			item("defaultedDependents", ast.NewArray()),
		),
		unknowns: []string{
			"input.request", "input.namespace",
			"input.analysis.object", "input.analysis.operation", "input.analysis.strategy",
			"input.analysis.lastApplied.bytes", "input.analysis.lastApplied.replaced", "input.analysis.annotationsBytes", "input.analysis.drift",
		},
	},
}

// silenceQuery asks whether there is any decision at all.
const silenceQuery = Query + "[_]"

// silenceOf returns the classifications for which the policy set compiled
// in c, with the data in store, yields no decision for any input whose
// analysis is empty (emptyAnalysis), whatever its request and namespace
// are: partial evaluation of the decisions with those parts unknown leaves
// no query. A classification is left out whenever that is not certain: a
// residual query, a failed partial evaluation, a policy that reads the
// time or another non-deterministic builtin, or one that uses with.
//
// Two differences with a full evaluation remain, both errors that the
// shortcut turns into no decision: a decision rule whose body fails on the
// known parts anyway but first calls a builtin that errs on the request
// (strict builtin errors), and a drift that cannot be encoded as input
// (an owner's time past the year 9999).
func silenceOf(ctx context.Context, c *ast.Compiler, store storage.Store, caps *ast.Capabilities) []Classification {
	pq, err := rego.New(
		rego.Query(silenceQuery),
		rego.Compiler(c),
		rego.Store(store),
		rego.Capabilities(caps),
		rego.StrictBuiltinErrors(true),
	).PrepareForPartial(ctx)
	if err != nil {
		return nil
	}
	var silent []Classification
	for _, class := range classifications {
		if silentFor(ctx, pq, class) {
			silent = append(silent, class)
		}
	}
	return silent
}

// silentFor reports whether pq has no residual query for class in every
// shape of silentShapes.
func silentFor(ctx context.Context, pq rego.PreparedPartialQuery, class Classification) bool {
	for _, shape := range silentShapes {
		fields := [][2]*ast.Term{item("classification", ast.String(class))}
		if shape.analysis != nil {
			fields = append(fields, item("analysis", shape.analysis))
		}
		unknowns := make([]*ast.Term, len(shape.unknowns))
		for i, u := range shape.unknowns {
			unknowns[i] = inputRef(u)
		}
		pqs, err := pq.Partial(ctx,
			rego.EvalParsedInput(ast.NewObject(fields...)),
			rego.EvalParsedUnknowns(unknowns),
			rego.EvalNondeterministicBuiltins(false),
		)
		if err != nil || len(pqs.Queries) > 0 {
			return false
		}
	}
	return true
}

// inputRef is the reference to a dotted path such as
// "input.analysis.drift".
func inputRef(path string) *ast.Term {
	parts := strings.Split(path, ".")
	ref := ast.Ref{ast.InputRootDocument}
	for _, p := range parts[1:] {
		ref = append(ref, ast.StringTerm(p))
	}
	return ast.NewTerm(ref)
}

// silentOn reports whether set may skip Rego for in. The shapes that
// silenceOf evaluates have no autoscaling part: an input with one is
// always evaluated.
func (s *policySet) silentOn(in *Input) bool {
	return slices.Contains(s.silent, in.Classification) && emptyAnalysis(in.Analysis) && in.Autoscaling == nil
}
