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
// Handlers returns the HTTP endpoints to register on the webhook server
// (MutatingEndpoint, ValidatingEndpoint): each reads a review within its
// size and memory bounds (WithMemoryBudget) and the API server's deadline,
// decodes the review and its objects once, with one decoder
// (sigs.k8s.io/json; answers byte-identical to controller-runtime's
// admission.Webhook for every review an API server sends, but that a
// patch holds no replace of a number whose text alone differs from Go's
// encoding of it; a 400 naming what is wrong for a body that is no JSON
// AdmissionReview), and writes the typed answer.
// Mutating and Validating are the same passes as admission handlers, for
// a caller that decodes the review itself.
//
// Every review returns audit annotations (rule, action, classification),
// which the API server's audit log records under the webhook's name, and,
// WithEventRecorder, the validating pass records a Warning event on the
// object for each rule that denies or warns: off the review's path, at
// most one per object and rule per interval (internal/events, shared with
// the audit), never for a dry run.
//
// WithTracerProvider and Reviewer.Traced trace each review with
// OpenTelemetry (a root span continuing the API server's traceparent, with
// decode, analysis, policy and repair spans; internal/tracing); without a
// provider they cost the review nothing.
//
// See ExampleReviewer, ExampleReviewer_Mutating, ExampleReviewer_ValidatingEndpoint and
// ExampleWithEventRecorder.
package webhook
