package audit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Fix is what a finding's fix writes, as merge analyzed the object when
// the scan read it. kubectl hygiene audit --fix writes it; a finding has
// one only when the fix is safe to write without asking anyone: a
// repaired last-applied proven by the object's revisions, or an orphan's
// guarded remove patch.
type Fix struct {
	// Patch is what the fix writes: the remedy of the finding's decision
	// (policy.Decision.Patch), which the rule built from merge's facts
	// (the repaired last-applied, the orphan's guarded remove patch).
	Patch policy.Patch
	// LastApplied is the object's last-applied annotation as scanned: a
	// fix writes only while the annotation still has this value, since
	// both facts are judged against it (an apply in between may have
	// taken the orphan into last-applied).
	LastApplied string
	// Rollback, for stale-last-applied, is merge's analysis of the undo,
	// which the fix's summary and preview describe; its
	// RepairedLastApplied is the annotation that Patch writes.
	Rollback *merge.Rollback
	// Orphan, for orphaned-field, is merge's fact about the field; its
	// RemovePatch is what Patch holds, test operations first.
	Orphan *merge.FieldFact
	// Manager, for stale-last-applied, is the field manager the repair
	// writes as: the one that owns last-applied with an Update (kubectl's
	// client-side apply, normally), so that the annotation stays its and
	// kubectl apply --server-side, which upgrades the Update managers
	// owning last-applied, still finds every client-side field. "" when no
	// Update owns it: the fixer's own manager then writes.
	Manager string
}

// fixOf returns the fix of the finding of d on path, nil when there is
// none that is safe to write, with the reason when one was close. What
// it writes is d's patch; fixOf only judges whether the audit may write
// it: a bundled rule's, guarded as that rule needs (the owners of
// last-applied for a repair, an orphan that no undo restored), and only
// when it is exactly the patch merge's fact proves (notProven else). A
// user policy's patch is carried out by the mutating pass only.
func fixOf(d policy.Decision, path string, obj *unstructured.Unstructured, an *merge.Analysis) (*Fix, string) {
	if d.Patch == nil {
		return nil, ""
	}
	switch d.Rule {
	case policy.RuleStaleLastApplied:
		if an.Rollback == nil || an.Rollback.RepairedLastApplied == "" {
			return nil, ""
		}
		owners := merge.LastAppliedUpdaters(obj)
		if len(owners) > 1 {
			return nil, "last-applied is owned by " + strings.Join(owners, " and ") + ": a repair written as one of them would take it from the others, and kubectl apply --server-side would then not upgrade their fields"
		}
		proven := policy.Patch{{Op: policy.OpReplace, Path: lastAppliedPointer, Value: an.Rollback.RepairedLastApplied}}
		if !samePatch(d.Patch, proven) {
			return nil, notProven
		}
		fix := &Fix{Patch: d.Patch, LastApplied: obj.GetAnnotations()[merge.LastAppliedAnnotation], Rollback: an.Rollback}
		if len(owners) == 1 {
			fix.Manager = owners[0]
		}
		return fix, ""
	case policy.RuleOrphanedField:
		for i := range an.Orphans {
			o := &an.Orphans[i]
			if o.Path.String() != path || o.RemovePatch == "" {
				continue
			}
			if restoredByUndo(o.Owners) {
				return nil, undoRestored
			}
			var proven policy.Patch
			if err := json.Unmarshal([]byte(o.RemovePatch), &proven); err != nil || !samePatch(d.Patch, proven) {
				return nil, notProven
			}
			return &Fix{Patch: d.Patch, LastApplied: obj.GetAnnotations()[merge.LastAppliedAnnotation], Orphan: o}, ""
		}
	}
	return nil, ""
}

// notProven says why a bundled rule's finding whose decision's patch is
// not the one merge's fact proves gets no fix: a user policy that reuses
// the rule's ID may emit any patch, and the audit writes only what the
// fact proves (the orphan's guarded remove patch, the repaired
// last-applied).
const notProven = "its decision's patch is not the one merge's analysis proves (the orphan's guarded remove patch, or the repaired last-applied): a policy that reuses the rule's ID wrote it, and the audit writes only what it proves"

// samePatch reports whether a and b are the same operations with the same
// values, numbers compared by value (a patch decoded from Rego holds
// json.Number, one decoded from merge's JSON float64).
func samePatch(a, b policy.Patch) bool {
	x, errX := canonicalJSON(a)
	y, errY := canonicalJSON(b)
	return errX == nil && errY == nil && x == y
}

// canonicalJSON encodes p, decodes it and encodes it again, so that equal
// values encode alike.
func canonicalJSON(p policy.Patch) (string, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encoding a patch: %w", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("decoding a patch: %w", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding a patch: %w", err)
	}
	return string(out), nil
}

// undoRestored says why an orphan that kubectl rollout undo's entry owns
// (restoredByUndo) gets no removal.
const undoRestored = "kubectl rollout undo restored it from an earlier revision, which does not prove who first set it (a tool's stamp, such as Reloader's, comes back with the template): remove it yourself if nothing needs it"

// restoredByUndo reports whether kubectl rollout undo's entry
// (merge.IsUndoEntry) is among the owners of a field: the undo may have
// copied it from a revision, and managedFields no longer say who first
// wrote it, so a fix that removes it would write beyond what it proves
// (and take back part of the undo, rolling the pods to a template no
// revision had). Both the periodic audit and kubectl hygiene audit --fix
// leave it to the printed command.
func restoredByUndo(owners []merge.Owner) bool {
	return slices.ContainsFunc(owners, merge.IsUndoEntry)
}
