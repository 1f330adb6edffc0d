package audit

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Fix is what a finding's fix writes, as the rule decided when the scan
// read the object. kubectl hygiene audit --fix writes it; a finding has
// one only when a bundled rule's decision carries a patch for it (the
// stale-last-applied rule's repaired last-applied, the orphaned-field
// rule's guarded remove patch), which the rule gives only when the fix is
// safe to write without asking anyone.
type Fix struct {
	// Patch is what the fix writes: the remedy of the finding's decision
	// (policy.Decision.Patch), which the rule built from merge's facts.
	Patch policy.Patch
	// LastApplied is the object's last-applied annotation as scanned: a
	// fix writes only while the annotation still has this value, since
	// the rules judged against it (an apply in between may have taken an
	// orphan into last-applied).
	LastApplied string
	// Manager is the field manager the fix writes as
	// (policy.Decision.FieldManager): for a repair of last-applied, the
	// Update manager that owns the annotation; "" for the fixer's own.
	Manager string
	// Summary says what the fix does, naming fields and revisions, never
	// a value (policy.Decision.Summary).
	Summary string
}

// fixOf returns the fix of the finding of d, nil when there is none,
// with the reason when the rule gave one (policy.Decision.NoFix). What it
// writes is d's patch, as d's rule decided it: fixOf names no rule. Only
// a bundled rule's patch is written (policy.Decision.Bundled): a user
// policy's is carried out by the mutating pass only.
func fixOf(d policy.Decision, obj *unstructured.Unstructured) (*Fix, string) {
	if d.NoFix != "" {
		return nil, d.NoFix
	}
	if d.Patch == nil || !d.Bundled {
		return nil, ""
	}
	return &Fix{Patch: d.Patch, LastApplied: obj.GetAnnotations()[merge.LastAppliedAnnotation], Manager: d.FieldManager, Summary: d.Summary}, ""
}

// WritesLastApplied reports whether the fix's patch changes the
// last-applied annotation, and with what value: that of its add or
// replace ("" for a removal). Such a fix is the object's repair, written
// on its own (PlanFixes).
func (f *Fix) WritesLastApplied() (string, bool) {
	for _, op := range f.Patch {
		if op.Path != lastAppliedPointer || op.Op == policy.OpTest {
			continue
		}
		s, _ := op.Value.(string)
		return s, true
	}
	return "", false
}
