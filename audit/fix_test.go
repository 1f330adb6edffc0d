package audit

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// fixView is what the tests pin of a finding's fix.
type fixView struct {
	Rule, Path string
	// LastApplied and Repaired are the annotation as scanned and as the
	// repair writes it; Source is where the repair comes from.
	LastApplied, Repaired, Source string
	// RemovePatch is the orphan's guarded patch.
	RemovePatch string
}

// A finding carries the fix that merge's analysis supports: the repaired
// last-applied of a stale one, the remove patch of an orphan; a finding
// that needs a person has none.
func TestScanFindingsCarryTheirFix(t *testing.T) {
	stsObjs := readObjects(t, "seed004/statefulset.yaml")
	scanned := stsObjs[0].GetAnnotations()[merge.LastAppliedAnnotation]
	revisions := readObjects(t, "seed004/controllerrevisions.yaml")
	var kept string
	for _, r := range revisions {
		if r.GetName() == "my-wonderhoy-app-946448b85" {
			kept = r.GetAnnotations()[merge.LastAppliedAnnotation]
		}
	}
	if kept == "" || kept == scanned {
		t.Fatalf("the fixture's restored revision keeps last-applied %q, want v1's", kept)
	}
	tests := map[string]struct {
		objs []*unstructured.Unstructured
		// person runs the scan as kubectl hygiene audit --fix; else it is
		// the periodic audit's.
		person bool
		want   []fixView
	}{
		"seed 004 with its revisions: the last-applied that the restored revision kept": {
			objs: append(append([]*unstructured.Unstructured{}, stsObjs...), revisions...),
			want: []fixView{{Rule: "stale-last-applied", Path: laPath, LastApplied: scanned, Repaired: kept, Source: "controllerRevision"}},
		},
		"seed 004 whose v2 manifest set minReadySeconds and scaled to 5: the repair takes only the template from the revision": {
			objs: append(append([]*unstructured.Unstructured{}, scaledWithMinReady(t, stsObjs[0])), revisions...),
			want: []fixView{{Rule: "stale-last-applied", Path: laPath, LastApplied: withMinReadyAndReplicas(t, scanned),
				Repaired: withMinReadyAndReplicas(t, kept), Source: "controllerRevision"}},
		},
		// The undo's entry alone owns TO_BE_DELETED: the undo restored it,
		// and nothing proves who first set it (a tool's stamp comes back
		// the same way), so no removal (soak seed 271126, sequence 016:
		// audit --fix=apply removed Reloader's stamp that an undo restored).
		"seed 004 without its revisions: no fix for the orphan the undo restored, nor for the drifted image": {
			objs: stsObjs,
			want: []fixView{
				{Rule: "imperative-edit", Path: "spec.template.spec.containers[name=nginx].image"},
				{Rule: "orphaned-field", Path: "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := append([]*unstructured.Unstructured{namespaceObject("default", nil)}, tc.objs...)
			report, err := NewScanner(newFakeClient(objs...), testAnalyzer(t), testFixEngine(t), WithFixScope(FixScope{Person: tc.person})).Scan(t.Context(), Target{})
			if err != nil {
				t.Fatal(err)
			}
			got := []fixView{}
			for _, f := range report.Findings {
				v := fixView{Rule: string(f.Rule), Path: f.Path}
				if f.Fix != nil {
					v.LastApplied = f.Fix.LastApplied
					if f.Fix.Rollback != nil {
						v.Repaired, v.Source = f.Fix.Rollback.RepairedLastApplied, f.Fix.Rollback.RepairSource
					}
					if f.Fix.Orphan != nil {
						v.RemovePatch = f.Fix.Orphan.RemovePatch
					}
				}
				got = append(got, v)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fixes (-want +got):\n%s", diff)
			}
		})
	}
}

// scaledWithMinReady returns seed 004's StatefulSet as if its v2 manifest
// had set minReadySeconds: 10 and replicas: 5 (last-applied and live).
func scaledWithMinReady(t *testing.T, sts *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out := sts.DeepCopy()
	annots := out.GetAnnotations()
	annots[merge.LastAppliedAnnotation] = withMinReadyAndReplicas(t, annots[merge.LastAppliedAnnotation])
	out.SetAnnotations(annots)
	for field, v := range map[string]int64{"minReadySeconds": 10, "replicas": 5} {
		if err := unstructured.SetNestedField(out.Object, v, "spec", field); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// withMinReadyAndReplicas returns the last-applied la with spec
// minReadySeconds: 10 and replicas: 5, in kubectl's format.
func withMinReadyAndReplicas(t *testing.T, la string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(la), &m); err != nil {
		t.Fatal(err)
	}
	spec := m["spec"].(map[string]any)
	spec["minReadySeconds"], spec["replicas"] = 10, 5
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw) + "\n"
}

// What a fix writes is its decision's patch, which the rule built from
// merge's facts; the audit only judges whether it may write it. A user
// policy's patch is the mutating pass's to carry out, never the audit's.
func TestFixWritesItsDecisionsPatch(t *testing.T) {
	objs := append(readObjects(t, "seed004/statefulset.yaml"), readObjects(t, "seed004/controllerrevisions.yaml")...)
	report, err := NewScanner(newFakeClient(append([]*unstructured.Unstructured{namespaceObject("default", nil)}, objs...)...),
		testAnalyzer(t), testFixEngine(t)).Scan(t.Context(), Target{})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Findings) != 1 || report.Findings[0].Fix == nil {
		t.Fatalf("findings = %+v, want the stale last-applied with its fix", report.Findings)
	}
	fix := report.Findings[0].Fix
	want := policy.Patch{{Op: policy.OpReplace, Path: lastAppliedPointer, Value: fix.Rollback.RepairedLastApplied}}
	if diff := cmp.Diff(want, fix.Patch); diff != "" {
		t.Errorf("patch of the fix (-want +got):\n%s", diff)
	}

	user := policy.Decision{Rule: "team-label", Action: policy.ActionRepair, Patch: policy.Patch{{Op: policy.OpAdd, Path: "/metadata/labels/team", Value: "a"}}}
	if got, reason := fixOf(user, "metadata.labels[team]", objs[0], &merge.Analysis{}); got != nil || reason != "" {
		t.Errorf("fix of a user policy's repair = %+v (%q), want none", got, reason)
	}
}

// A user policy that reuses a bundled rule's ID may emit any patch: the
// audit writes a bundled rule's finding only when its decision's patch is
// exactly the one merge's fact proves (the orphan's guarded remove patch,
// the replace of last-applied with the repaired one), else no fix, with
// the reason.
func TestFixWritesOnlyWhatTheFactProves(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web", "debug": "true"},
			"annotations": map[string]any{merge.LastAppliedAnnotation: `{"kind":"Deployment"}` + "\n"}}}}
	debug, err := merge.ParsePath("metadata.labels.debug")
	if err != nil {
		t.Fatal(err)
	}
	const removePatch = `[{"op":"test","path":"/metadata/labels/debug","value":"true"},{"op":"remove","path":"/metadata/labels/debug"}]`
	an := &merge.Analysis{
		Orphans:  []merge.FieldFact{{Path: debug, Live: "true", RemovePatch: removePatch, Pointer: "/metadata/labels/debug"}},
		Rollback: &merge.Rollback{Confirmed: true, StaleLastApplied: true, RepairedLastApplied: `{"kind":"Deployment","spec":{}}` + "\n"},
	}
	orphanPatch := policy.Patch{{Op: policy.OpTest, Path: "/metadata/labels/debug", Value: "true"}, {Op: policy.OpRemove, Path: "/metadata/labels/debug"}}
	repairPatch := policy.Patch{{Op: policy.OpReplace, Path: lastAppliedPointer, Value: an.Rollback.RepairedLastApplied}}
	tests := map[string]struct {
		decision   policy.Decision
		path       string
		want       policy.Patch
		wantReason string
	}{
		"orphaned-field with the orphan's remove patch": {
			decision: policy.Decision{Rule: policy.RuleOrphanedField, Action: policy.ActionWarn, AuditFix: true, Patch: orphanPatch},
			path:     "metadata.labels.debug", want: orphanPatch,
		},
		"orphaned-field from a user module that removes every label": {
			decision: policy.Decision{Rule: policy.RuleOrphanedField, Action: policy.ActionWarn, AuditFix: true,
				Patch: policy.Patch{{Op: policy.OpRemove, Path: "/metadata/labels"}}},
			path: "metadata.labels.debug", wantReason: notProven,
		},
		"orphaned-field with the removal but not its guard": {
			decision: policy.Decision{Rule: policy.RuleOrphanedField, Action: policy.ActionWarn, AuditFix: true,
				Patch: policy.Patch{{Op: policy.OpRemove, Path: "/metadata/labels/debug"}}},
			path: "metadata.labels.debug", wantReason: notProven,
		},
		"stale-last-applied with the repaired last-applied": {
			decision: policy.Decision{Rule: policy.RuleStaleLastApplied, Action: policy.ActionRepair, Patch: repairPatch},
			path:     laPath, want: repairPatch,
		},
		"stale-last-applied from a user module that writes another annotation value": {
			decision: policy.Decision{Rule: policy.RuleStaleLastApplied, Action: policy.ActionRepair,
				Patch: policy.Patch{{Op: policy.OpReplace, Path: lastAppliedPointer, Value: "{}"}}},
			path: laPath, wantReason: notProven,
		},
		"stale-last-applied from a user module that also removes the labels": {
			decision: policy.Decision{Rule: policy.RuleStaleLastApplied, Action: policy.ActionRepair,
				Patch: append(policy.Patch{{Op: policy.OpRemove, Path: "/metadata/labels"}}, repairPatch...)},
			path: laPath, wantReason: notProven,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fix, reason := fixOf(tc.decision, tc.path, obj, an)
			if reason != tc.wantReason {
				t.Errorf("reason %q, want %q", reason, tc.wantReason)
			}
			var got policy.Patch
			if fix != nil {
				got = fix.Patch
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("patch of the fix (-want +got):\n%s", diff)
			}
		})
	}
}
