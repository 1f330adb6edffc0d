// Package audit finds, in objects already stored in a cluster, what
// apply-hygiene's admission webhook would have stopped or warned about had
// it seen the writes: fields that drifted from last-applied, orphaned
// fields, a last-applied that a rollout undo left stale, and a missing,
// invalid or oversized last-applied. Admission sees only new writes; the
// drift made before the webhook was installed, or while it failed open,
// is found here.
//
// A Scanner lists objects page by page with a dynamic client, analyzes
// each with merge (Analyzer.AnalyzeLive, plus Analyzer.StaleRollback
// against the object's ReplicaSets or ControllerRevisions, the same
// revision logic as the webhook's undo repair) and asks the policy engine
// with the classification "audit" (Classification), so rule IDs, actions
// and messages come from the same Rego rules and configuration as
// admission. `kubectl hygiene audit` prints its Report.
//
// A Runner repeats the scan on an interval inside a controller-runtime
// manager (only on the leader), exports the findings as the gauge
// apply_hygiene_audit_findings{rule,namespace} and records rate-limited
// Warning events on the objects. Its Schedule (a LeaseSchedule, kept in a
// Lease) carries the start of the last scan from one leader to the next,
// so that a hand-over does not repeat a scan within the interval; a
// replica exports the audit gauges only once it has scanned. After each
// successful scan it hands the Report to its Publisher, if any (package
// reports writes policy reports). With RunnerOptions.Fixer it first
// writes the fixes that need no person (PlanFixes: one guarded JSON patch
// per object, the same as kubectl hygiene audit --fix=apply, which uses
// PlanFixes and a Fixer too; see ExamplePlanFixes). A fix is a bundled
// rule's decision's patch, written as the manager it names with the
// summary it gives (policy.Decision); the rule, not this package, judges
// whether the fix may be written. See Example for a scan and
// ExampleNewLeaseSchedule for the schedule.
//
// audit is a driver like the webhook, and imports neither the webhook nor
// anything above it: it declares the small interfaces it needs, Evaluator
// (policy.Evaluator: a *policy.Engine) and Cluster (a *kube.Cluster, the
// reader the webhook uses too).
package audit
