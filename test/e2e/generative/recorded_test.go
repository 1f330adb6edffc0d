package generative_test

import "github.com/apply-hygiene/apply-hygiene/test/e2e/framework"

// recordedWithLastApplied reports whether q has an owner in obj's
// managedFields and every entry that owns it also owns last-applied: to
// any reader of the object the field is that record's, a manifest's.
// kubectl rollout undo and kubectl apply set-last-applied send no field
// manager, so the API server names both after the client (kubectl), one
// Update entry: once a person recorded last-applied that way, what an
// undo restored under the same name reads as the record's (generative
// seed 37964, sequence 001: the Reloader stamp that bob's undo brought
// back after alice's set-last-applied, left unreported at her next
// apply, as every applier's field is).
func recordedWithLastApplied(obj map[string]any, q fieldPath) bool {
	record := framework.Path("metadata", "annotations").Key(lastAppliedKey).String()
	owners := 0
	for _, m := range entriesOf(obj) {
		owned := entryOwns(m)
		if !owned[q.String()] {
			continue
		}
		if !owned[record] {
			return false
		}
		owners++
	}
	return owners > 0
}

// undoneUnderTheRecord reports whether q is a field an undo restored
// that before's managedFields give to the entry recording last-applied
// (recordedWithLastApplied): an apply's orphaned-field or
// apply-reverts-drift finding of it is allowed, never required (seed
// 281159, sequence 017: kubectl 1.27's undo restored an image, its
// set-last-applied recorded another, and the next apply set it back).
func (r *runner) undoneUnderTheRecord(q fieldPath, before map[string]any) bool {
	return r.fields[q.String()].undo && recordedWithLastApplied(before, q)
}
