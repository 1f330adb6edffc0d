package audit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// lastAppliedPointer is the JSON pointer to the last-applied annotation.
var lastAppliedPointer = merge.AnnotationPointer(merge.LastAppliedAnnotation)

// ObjectFix is every fix of one object, written as one guarded JSON patch
// (Patch). kubectl hygiene audit --fix and the periodic audit's Fixer
// both write it. It holds a repair or removals, never both: the repair is
// written under the manager that owns last-applied (FieldManager), and a
// removal under that name would be attributed to it.
type ObjectFix struct {
	// Object names the object.
	Object merge.ObjectRef
	// UID is the object's UID as scanned, for events.
	UID types.UID
	// Repair is the finding whose Fix writes last-applied
	// (Fix.WritesLastApplied: the stale-last-applied rule's repair), nil
	// when there is none.
	Repair *Finding
	// Removals are the object's other findings with a fix (the
	// orphaned-field rule's removals); none when Repair is set (PlanFixes
	// defers them to the next audit).
	Removals []Finding
	// Resource is the object's resource, as the scan listed it.
	Resource schema.GroupVersionResource
	// ResourceVersion, when set, pins the patch to the object as Recheck
	// read it right before the write: the patch tests it first, so the
	// API server refuses it after any change in between.
	ResourceVersion string
}

// PlanFixes groups the findings that have a fix by object, in the
// report's order, and returns the others apart: notFixed need a person;
// deferred are the other fixes of objects whose last-applied is repaired
// (a fix that writes last-applied, Fix.WritesLastApplied), since the
// rules judged them against last-applied as scanned (an orphan is a field
// that last-applied lacks, and the repaired one may have it): the audit
// run again after the repair judges them.
func PlanFixes(findings []Finding) (fixes []*ObjectFix, notFixed, deferred []Finding) {
	byObject := map[merge.ObjectRef]*ObjectFix{}
	for _, f := range findings {
		if f.Fix == nil {
			notFixed = append(notFixed, f)
			continue
		}
		of := byObject[f.Object]
		if of == nil {
			of = &ObjectFix{Object: f.Object, UID: f.UID, Resource: f.Resource}
			byObject[f.Object] = of
			fixes = append(fixes, of)
		}
		if _, repairs := f.Fix.WritesLastApplied(); repairs {
			of.Repair = &f
		} else {
			of.Removals = append(of.Removals, f)
		}
	}
	for _, of := range fixes {
		if of.Repair != nil {
			deferred = append(deferred, of.Removals...)
			of.Removals = nil
		}
	}
	return fixes, notFixed, deferred
}

// Findings are the findings the fix fixes: the repaired stale
// last-applied, or the removed orphans.
func (of *ObjectFix) Findings() []Finding {
	if of.Repair != nil {
		return []Finding{*of.Repair}
	}
	return of.Removals
}

// Patch is the object's JSON patch: the audit's tests first (the
// resourceVersion when pinned; last-applied as the audit read it, which
// both the repair and the orphans were judged against), then the
// findings' fixes, each its decision's patch, combined by
// policy.Combine: each orphan's own guards (its value, the merge keys on
// the way), the writes, the removals from the end of the object
// backwards so that removing a list element shifts none that is still to
// go.
func (of *ObjectFix) Patch() ([]byte, error) {
	if of.Repair != nil && len(of.Removals) > 0 {
		return nil, fmt.Errorf("patching %s %s: a repair of last-applied and removals are never written together: the repair is written as %s, the removals as the fixer; fix the repair first and audit again", of.Object.Kind, objectName(of.Object), of.Repair.Fix.Manager)
	}
	var tests policy.Patch
	if of.ResourceVersion != "" {
		tests = append(tests, policy.PatchOperation{Op: policy.OpTest, Path: "/metadata/resourceVersion", Value: of.ResourceVersion})
	}
	if guard, guarded := of.lastApplied(); guarded {
		tests = append(tests, policy.PatchOperation{Op: policy.OpTest, Path: lastAppliedPointer, Value: guard})
	}
	var fixes []policy.Patch
	for _, f := range of.Findings() {
		fixes = append(fixes, f.Fix.Patch)
	}
	raw, err := json.Marshal(slices.Concat(tests, policy.Combine(fixes...)))
	if err != nil {
		return nil, fmt.Errorf("encoding the patch of %s %s: %w", of.Object.Kind, objectName(of.Object), err)
	}
	return raw, nil
}

// FieldManager is the field manager that writes the fix: for a repair of
// last-applied, the Update manager that owns the annotation (Fix.Manager),
// which writes nothing else (Patch refuses removals beside a repair); ""
// for the fixer's own, which writes removals.
func (of *ObjectFix) FieldManager() string {
	if of.Repair != nil {
		return of.Repair.Fix.Manager
	}
	return ""
}

// lastApplied is the annotation as the audit read it, from any of the
// object's fixes (one scan read them all); false when none has it.
func (of *ObjectFix) lastApplied() (string, bool) {
	if of.Repair != nil {
		return of.Repair.Fix.LastApplied, true
	}
	for _, f := range of.Removals {
		if f.Fix.LastApplied != "" {
			return f.Fix.LastApplied, true
		}
	}
	return "", false
}

// Summary says what the fix does: its findings' summaries
// (Fix.Summary), e.g. "removed
// spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]
// (rolls the pods)". It names fields and revisions, never a value.
func (of *ObjectFix) Summary() string {
	var parts []string
	if of.Repair != nil {
		parts = append(parts, of.Repair.Fix.Summary)
	}
	for _, f := range of.Removals {
		parts = append(parts, f.Fix.Summary)
	}
	return strings.Join(parts, "; ")
}
