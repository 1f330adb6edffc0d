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

// rollsPodsPhrase is how the orphaned-field rule says that removing the
// field changes a pod template whose change starts a rollout
// (template_change in policy/rules/lib.rego). A fix repeats the rule's
// judgement; it has none of its own.
const rollsPodsPhrase = "so it rolls the pods"

// lastAppliedPointer is the JSON pointer to the last-applied annotation.
var lastAppliedPointer = "/metadata/annotations/" + strings.ReplaceAll(merge.LastAppliedAnnotation, "/", "~1")

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
	// Repair is the stale-last-applied finding whose Fix writes the
	// repaired last-applied, nil when there is none.
	Repair *Finding
	// Removals are the orphaned-field findings whose fields go; none
	// when Repair is set (PlanFixes defers them to the next audit).
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
// deferred are the orphans of objects whose last-applied is repaired,
// since an orphan is a field that last-applied lacks and the repaired one
// may have it: the audit run again after the repair judges them.
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
		if f.Fix.Rollback != nil {
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

// Summary says what the fix does, e.g. "removed
// spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]
// (rolls the pods)". It names fields and revisions, never a value.
func (of *ObjectFix) Summary() string {
	var parts []string
	if of.Repair != nil {
		parts = append(parts, repairText(of.Repair.Fix.Rollback))
	}
	for _, f := range of.Removals {
		s := "removed " + f.Path
		if strings.Contains(f.Message, rollsPodsPhrase) {
			s += " (rolls the pods)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// repairText names where the repaired last-applied comes from. Either way
// the repair changes only the pod template's fields (and a Deployment's
// annotations) that the undo restored and that it proves a manifest's.
func repairText(rb *merge.Rollback) string {
	if rb.RepairSource == "controllerRevision" {
		return fmt.Sprintf("last-applied's pod template set to the one that %s %s (revision %d) kept", rb.RevisionKind, rb.RevisionName, rb.Revision)
	}
	return fmt.Sprintf("last-applied rebuilt for the pod template of %s %s (revision %d)", rb.RevisionKind, rb.RevisionName, rb.Revision)
}
