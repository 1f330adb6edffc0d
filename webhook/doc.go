// Package webhook holds apply-hygiene's admission handlers: a mutating
// handler that repairs (stale last-applied after a rollout undo, defaulted
// dependents, pruned orphans) and a validating handler that denies and
// warns. Both follow the same path for every UPDATE of a workload:
//
//	decode → classify → merge (facts) → policy (decisions) → response
//
// The first four steps are the review core, internal/review, which
// `kubectl hygiene test` drives too; this package adds what belongs to
// admission: the API server's deadline, the responses (denials, warnings
// cut to length, JSON patches), metrics and logs.
//
// A Reviewer holds the parts that are built once: a merge.Analyzer, an
// Evaluator (the policy engine) and a Cluster reader for what a request
// does not carry (the parent of a /scale request, the revisions of a
// rollout undo, the namespace's labels; a *kube.Cluster in the server).
// Mutating and Validating return controller-runtime admission handlers to
// register on the webhook server; NewHTTPHandler serves one over HTTP,
// decoding the review and its objects once (with answers byte-identical to
// controller-runtime's decode, which it leaves every body it cannot decode
// so), and Reviewer.WithinBudget bounds the memory of the reviews in
// flight.
//
// See ExampleReviewer, ExampleReviewer_Mutating and ExampleNewHTTPHandler.
package webhook
