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
// The analyses compare only what changed where that provably changes no
// fact: an edit that touches no field of last-applied is not compared at
// all, and kubectl's patch for the next apply (which decides whether an
// edit is put back) is recomputed on the parts of the objects that lead to
// the facts. An Analyzer also keeps parsed last-applied annotations in a
// bounded cache (WithLastAppliedCacheSize). WithShadowVerify runs every
// analysis once more without either and fails on any difference; the
// package's differential tests hold the two equal on captured reviews,
// derived and generated writes.
//
// Each entry point has its own file, named after it: Apply (apply.go) and
// ApplyManifest (apply_manifest.go) recompute kubectl's patch and result;
// AnalyzeUpdate (analyze_update.go), AnalyzeClientSideApply
// (analyze_client_side_apply.go) and AnalyzeServerSideApply
// (analyze_server_side_apply.go) analyze a write, the first when its kind is
// not known; AnalyzeLive (analyze_live.go) and Explain (explain.go) a stored
// object. The facts of an apply are computed in apply_facts.go.
//
// See ExampleAnalyzer_AnalyzeClientSideApply for the orphaned environment
// variable that survives `kubectl apply` after a `kubectl rollout undo`, and
// ExampleAnalyzer_StaleRollback for the last-applied that undo left stale.
package merge
