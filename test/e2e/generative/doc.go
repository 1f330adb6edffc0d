// Package generative proves apply-hygiene's precision with random
// sequences of real writes: seeded sequences of kubectl commands and of the
// writers that are not people (an autoscaler and a KEDA-like robot through
// /scale, a Reloader-like robot, a Keel-like image updater, Argo CD, Flux, Helm 3 and 4, a finalizer
// controller, kube-controller-manager's garbage collector and its
// horizontal pod autoscaler behind kubectl autoscale, and a mesh
// injector: a second mutating webhook that stamps every write) run
// against objects of the
// real-world corpus (test/e2e/realworld/testdata) through a real API server
// with the chart's webhooks under failurePolicy Fail.
//
// The truth of every step comes from the sequence itself: which identity
// ran which command, and the object before and after it, never from
// merge/, policy/ or the webhook's words. After every step the test checks
// that the webhook answered no request with an error, that the writes that
// must pass passed, that every denial names a field last-applied owns
// which the write moves away and which the next apply of the same manifest
// puts back (replayed in a copy of the object in a namespace the webhook
// ignores), that every orphaned-field and apply-reverts-drift finding
// names a field a person set, and that every such field is reported (but
// one whose removal the API server gives back or refuses, which a
// server-side dry run on a copy decides), that
// an undo's repair of last-applied changes only what the undo restored,
// that the command each orphaned-field warning prints removes the field
// for good (or, where a write since the warning, apply-hygiene's own fix
// among them, left an object its JSON patch no longer applies to, that
// its guard refuses), and that `kubectl hygiene diff` predicts each apply
// exactly.
//
// apply-hygiene's own writes are judged the same way: the server's
// periodic audit runs every 20 s with --audit-fix and orphaned-field's
// auditFix during every sequence, `kubectl hygiene audit --fix=apply` and
// `kubectl hygiene migrate --server-side` are steps, and six sequences in
// twenty carry the label the server's --object-selector lets the audit fix
// (periodic_test.go): three in a namespace of their own, where it removes
// orphans and may repair the last-applied that an exempt person's undo
// left stale, and three in a namespace labelled apply-hygiene.io/ignore,
// apply-hygiene.io/enforcement=dryrun or apply-hygiene.io/enforcement=warn
// (selfwriters_test.go). Those sequences run in step with the audit's
// scans, so that its writes land between steps. Each write must be in
// scope, follow from the sequence (a removal of a person's orphan that is
// still one by the sequence's record, a repair of last-applied after an
// undo, a migration that changes only managedFields) and lose no field a
// person or robot still needs.
//
// A failing sequence is minimised (delta debugging over its steps,
// replayed in fresh namespaces) and printed as a kubectl script. The test
// prints one line:
//
//	generative: N steps, W writers, F false warnings, D false denials, M misses, E webhook errors, S wrong self-writes
//
// Run it with a seed and a budget of steps (the seed is printed; without
// GENERATIVE_SEED it rotates per run); GENERATIVE_PARALLEL sequences run at
// once (4):
//
//	APPLY_HYGIENE_E2E=required GENERATIVE_SEED=42 GENERATIVE_STEPS=500 go test ./test/e2e/generative/
//
// GENERATIVE_KUBECTL=path[,path…] gives the sequence's people those kubectl
// binaries in turn instead of the one hack/ builds (older releases: their
// field managers and patches differ).
package generative
