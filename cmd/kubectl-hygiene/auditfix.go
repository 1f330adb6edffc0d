package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Values of --fix.
const (
	fixDryRun = "dry-run"
	fixApply  = "apply"
)

// rollsPodsPhrase is how the orphaned-field rule says that removing the
// field changes a pod template whose change starts a rollout
// (template_change in policy/rules/lib.rego). audit --fix repeats the
// rule's judgement; it has none of its own.
const rollsPodsPhrase = "so it rolls the pods"

// objectFix is every fix of one object, written as one JSON patch.
type objectFix struct {
	ref merge.ObjectRef
	// repair is the stale-last-applied fix, nil when there is none.
	repair *audit.Fix
	// removals are the orphaned-field findings whose fields go.
	removals []audit.Finding
}

// planFixes groups the findings that have a fix by object, in the
// report's order, and returns the others apart: notFixed need a person;
// deferred are the orphans of objects whose last-applied is repaired,
// since an orphan is a field that last-applied lacks and the repaired one
// may have it: the audit run again after the repair judges them.
func planFixes(findings []audit.Finding) (fixes []*objectFix, notFixed, deferred []audit.Finding) {
	byObject := map[merge.ObjectRef]*objectFix{}
	for _, f := range findings {
		if f.Fix == nil {
			notFixed = append(notFixed, f)
			continue
		}
		of := byObject[f.Object]
		if of == nil {
			of = &objectFix{ref: f.Object}
			byObject[f.Object] = of
			fixes = append(fixes, of)
		}
		if f.Fix.Rollback != nil {
			of.repair = f.Fix
		} else {
			of.removals = append(of.removals, f)
		}
	}
	for _, of := range fixes {
		if of.repair != nil {
			deferred = append(deferred, of.removals...)
			of.removals = nil
		}
	}
	return fixes, notFixed, deferred
}

// jsonPatchOp is one RFC 6902 operation.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// patch is the object's JSON patch: every test first, then the writes,
// the removals from the end of the object backwards so that removing a
// list element shifts none that is still to go. The tests: last-applied
// as the audit read it, which both the repair and the orphans were judged
// against, and each orphan's own guards (its value, the merge keys on the
// way).
func (of *objectFix) patch() ([]byte, error) {
	var tests, writes, removes []jsonPatchOp
	guard, guarded := of.lastApplied()
	if guarded {
		tests = append(tests, jsonPatchOp{Op: "test", Path: lastAppliedPointer, Value: guard})
	}
	if of.repair != nil {
		writes = append(writes, jsonPatchOp{Op: "replace", Path: lastAppliedPointer, Value: of.repair.Rollback.RepairedLastApplied})
	}
	for _, f := range of.removals {
		var ops []jsonPatchOp
		if err := json.Unmarshal([]byte(f.Fix.Orphan.RemovePatch), &ops); err != nil {
			return nil, fmt.Errorf("decoding the remove patch of %s: %w", f.Path, err)
		}
		for _, op := range ops {
			if op.Op == "test" {
				tests = append(tests, op)
			} else {
				removes = append(removes, op)
			}
		}
	}
	slices.SortStableFunc(removes, func(a, b jsonPatchOp) int { return comparePointers(b.Path, a.Path) })
	raw, err := json.Marshal(slices.Concat(tests, writes, removes))
	if err != nil {
		return nil, fmt.Errorf("encoding the patch of %s: %w", displayName(of.ref), err)
	}
	return raw, nil
}

// lastApplied is the annotation as the audit read it, from any of the
// object's fixes (one scan read them all); false when none has it.
func (of *objectFix) lastApplied() (string, bool) {
	if of.repair != nil {
		return of.repair.LastApplied, true
	}
	for _, f := range of.removals {
		if f.Fix.LastApplied != "" {
			return f.Fix.LastApplied, true
		}
	}
	return "", false
}

// comparePointers orders JSON pointers token by token, list indices by
// number, a pointer after its prefixes.
func comparePointers(a, b string) int {
	x, y := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] == y[i] {
			continue
		}
		m, errM := strconv.Atoi(x[i])
		n, errN := strconv.Atoi(y[i])
		if errM == nil && errN == nil {
			return cmp.Compare(m, n)
		}
		return cmp.Compare(x[i], y[i])
	}
	return cmp.Compare(len(x), len(y))
}

// summary says what the fix does, as the object's line after "fixed: ".
func (of *objectFix) summary() string {
	var parts []string
	if of.repair != nil {
		parts = append(parts, repairText(of.repair.Rollback))
	}
	for _, f := range of.removals {
		s := "removed " + f.Path
		if strings.Contains(f.Message, rollsPodsPhrase) {
			s += " (rolls the pods)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// repairText names where the repaired last-applied comes from.
func repairText(rb *merge.Rollback) string {
	if rb.RepairSource == "controllerRevision" {
		return fmt.Sprintf("last-applied set to the one that %s %s (revision %d) kept", rb.RevisionKind, rb.RevisionName, rb.Revision)
	}
	return fmt.Sprintf("last-applied rebuilt for the pod template of %s %s (revision %d)", rb.RevisionKind, rb.RevisionName, rb.Revision)
}

// notFixedText is the line of a finding that audit --fix leaves to a
// person, with the command its message names; name names its object.
func notFixedText(name string, f audit.Finding) string {
	s := fmt.Sprintf("%s not fixed: %s %s", name, f.Rule, f.Path)
	if c := policy.FixCommand(f.Message); c != "" {
		return s + "; fix it with: " + c
	}
	return s + "; see the message: " + f.Message
}

// deferredText is the line of an orphan left for after the repair of its
// object's last-applied; name names its object.
func deferredText(name string, f audit.Finding) string {
	return fmt.Sprintf("%s not fixed yet: %s %s; last-applied is repaired first, run the audit again to see whether the field is still an orphan", name, f.Rule, f.Path)
}

// displayName names an object as kubectl does: deployment.apps/web.
func displayName(ref merge.ObjectRef) string {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	kind := strings.ToLower(ref.Kind)
	if err == nil && gv.Group != "" {
		kind += "." + gv.Group
	}
	return kind + "/" + ref.Name
}

// objectName is displayName, followed by the namespace when the audit
// scanned every namespace: "deployment.apps/web (namespace shop)".
func (o *AuditOptions) objectName(ref merge.ObjectRef) string {
	if o.AllNamespaces && ref.Namespace != "" {
		return displayName(ref) + " (namespace " + ref.Namespace + ")"
	}
	return displayName(ref)
}
