// Package merge recomputes kubectl's client-side apply and derives
// field-level facts from it: which fields last-applied owns, which drifted
// from it, which an apply reverts, which it leaves orphaned and who set
// them, whether a write was a rollout undo and what last-applied should say
// afterwards.
//
// merge owns every fact, so that every driver (the webhook, the audit, the
// CLI) reports the same ones: each orphan carries the guarded JSON patch
// that removes it (FieldFact.RemovePatch), and one revision logic serves
// both the webhook's undo repair (Analyzer.DetectRollback) and the audit's
// search of stored objects for a stale last-applied
// (Analyzer.StaleRollback).
//
// The three-way merge is kubectl's own: a strategic merge patch with patch
// metadata from the k8s.io/api Go types for built-in kinds, a JSON merge
// patch for kinds without a Go type (custom resources). Field paths and
// field sets are structured-merge-diff's, the ones server-side apply and
// metadata.managedFields use, written in kubectl's notation by Path.
//
// The package is pure: objects (*unstructured.Unstructured or JSON bytes)
// in, result structs out; no I/O, no logging, no package-level state. Build
// one Analyzer with NewAnalyzer and share it: its type converter is costly
// to build and it is safe for concurrent use.
//
// See ExampleAnalyzer_AnalyzeApply for the orphaned environment variable
// that survives `kubectl apply` after a `kubectl rollout undo`, and
// ExampleAnalyzer_StaleRollback for the last-applied that undo left stale.
package merge
