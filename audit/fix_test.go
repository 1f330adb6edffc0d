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
	// repair writes it; Manager is who writes it.
	LastApplied, Repaired, Manager string
	// Summary says what the fix does, naming where the repair comes from.
	Summary string
	// NoFix is why a finding has none although its rule knows one.
	NoFix string
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
	const keptSummary = "last-applied's pod template set to the one that ControllerRevision my-wonderhoy-app-946448b85 (revision 1) kept"
	tests := map[string]struct {
		objs []*unstructured.Unstructured
		// person runs the scan as kubectl hygiene audit --fix; else it is
		// the periodic audit's.
		person bool
		want   []fixView
	}{
		"seed 004 with its revisions: the last-applied that the restored revision kept": {
			objs: append(append([]*unstructured.Unstructured{}, stsObjs...), revisions...),
			want: []fixView{{Rule: "stale-last-applied", Path: laPath, LastApplied: scanned, Repaired: kept, Manager: "kubectl-client-side-apply", Summary: keptSummary}},
		},
		"seed 004 whose v2 manifest set minReadySeconds and scaled to 5: the repair takes only the template from the revision": {
			objs: append(append([]*unstructured.Unstructured{}, scaledWithMinReady(t, stsObjs[0])), revisions...),
			want: []fixView{{Rule: "stale-last-applied", Path: laPath, LastApplied: withMinReadyAndReplicas(t, scanned),
				Repaired: withMinReadyAndReplicas(t, kept), Manager: "kubectl-client-side-apply", Summary: keptSummary}},
		},
		// The undo's entry alone owns TO_BE_DELETED: the undo restored it,
		// and nothing proves who first set it (a tool's stamp comes back
		// the same way), so no removal (soak seed 271126, sequence 016:
		// audit --fix=apply removed Reloader's stamp that an undo restored).
		"seed 004 without its revisions: no fix for the orphan the undo restored, nor for the drifted image": {
			objs: stsObjs,
			want: []fixView{
				{Rule: "imperative-edit", Path: "spec.template.spec.containers[name=nginx].image"},
				{Rule: "orphaned-field", Path: "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", NoFix: undoRestored},
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
				v := fixView{Rule: string(f.Rule), Path: f.Path, NoFix: f.NoFix}
				if f.Fix != nil {
					v.LastApplied, v.Manager, v.Summary = f.Fix.LastApplied, f.Fix.Manager, f.Fix.Summary
					v.Repaired, _ = f.Fix.WritesLastApplied()
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

// undoRestored is the orphaned-field rule's reason why the audit does not
// remove an orphan that kubectl rollout undo restored.
const undoRestored = "kubectl rollout undo restored it from an earlier revision, which does not prove who first set it (a tool's stamp, such as Reloader's, comes back with the template): remove it yourself if nothing needs it"

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
	var kept string
	for _, r := range objs {
		if r.GetName() == "my-wonderhoy-app-946448b85" {
			kept = r.GetAnnotations()[merge.LastAppliedAnnotation]
		}
	}
	want := policy.Patch{{Op: policy.OpReplace, Path: lastAppliedPointer, Value: kept}}
	if diff := cmp.Diff(want, report.Findings[0].Fix.Patch); diff != "" {
		t.Errorf("patch of the fix (-want +got):\n%s", diff)
	}
}

// The audit writes a decision's patch only when a bundled rule made it
// (policy.Decision.Bundled), and never one whose rule says why not
// (policy.Decision.NoFix). A user module cannot pass for a bundled rule:
// the engine refuses modules in their packages (policy's tests).
func TestFixWritesOnlyABundledRulesPatch(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web", "debug": "true"},
			"annotations": map[string]any{merge.LastAppliedAnnotation: `{"kind":"Deployment"}` + "\n"}}}}
	orphanPatch := policy.Patch{{Op: policy.OpTest, Path: "/metadata/labels/debug", Value: "true"}, {Op: policy.OpRemove, Path: "/metadata/labels/debug"}}
	tests := map[string]struct {
		decision   policy.Decision
		want       *Fix
		wantReason string
	}{
		"a bundled rule's patch": {
			decision: policy.Decision{Rule: policy.RuleOrphanedField, Action: policy.ActionWarn, AuditFix: true, Patch: orphanPatch,
				Summary: "removed metadata.labels.debug", Bundled: true},
			want: &Fix{Patch: orphanPatch, LastApplied: `{"kind":"Deployment"}` + "\n", Summary: "removed metadata.labels.debug"},
		},
		"a bundled rule's repair, written as the manager it names": {
			decision: policy.Decision{Rule: policy.RuleStaleLastApplied, Action: policy.ActionRepair, Bundled: true, FieldManager: "kubectl-client-side-apply",
				Patch: policy.Patch{{Op: policy.OpReplace, Path: lastAppliedPointer, Value: "{}\n"}}},
			want: &Fix{Patch: policy.Patch{{Op: policy.OpReplace, Path: lastAppliedPointer, Value: "{}\n"}}, LastApplied: `{"kind":"Deployment"}` + "\n",
				Manager: "kubectl-client-side-apply"},
		},
		"a user policy's patch under a bundled rule's ID, one that removes every label": {
			decision: policy.Decision{Rule: policy.RuleOrphanedField, Action: policy.ActionWarn, AuditFix: true,
				Patch: policy.Patch{{Op: policy.OpRemove, Path: "/metadata/labels"}}},
		},
		"a user policy's patch that is a bundled rule's own": {
			decision: policy.Decision{Rule: policy.RuleOrphanedField, Action: policy.ActionWarn, AuditFix: true, Patch: orphanPatch},
		},
		"a bundled rule's decision that says why there is no fix": {
			decision:   policy.Decision{Rule: policy.RuleOrphanedField, Action: policy.ActionWarn, AuditFix: true, Bundled: true, NoFix: undoRestored},
			wantReason: undoRestored,
		},
		"a bundled rule's decision without a patch": {
			decision: policy.Decision{Rule: policy.RuleImperativeEdit, Action: policy.ActionDeny, Bundled: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fix, reason := fixOf(tc.decision, obj)
			if reason != tc.wantReason {
				t.Errorf("reason %q, want %q", reason, tc.wantReason)
			}
			if diff := cmp.Diff(tc.want, fix); diff != "" {
				t.Errorf("fix (-want +got):\n%s", diff)
			}
		})
	}
}

// A user policy in a package of its own that reuses orphaned-field's ID
// and emits a patch for an orphan gets no fix from the audit, even with
// the rule's auditFix knob, whether the patch is the orphan's guarded
// remove patch or one that removes every label: the audit writes the
// bundled rules' patches only (it used to write the first and refuse the
// second as not proven).
func TestScanGivesAUserPolicysPatchNoFix(t *testing.T) {
	const mine = `package applyhygiene.rules.mine

decisions contains d if {
	input.classification == "audit"
	some o in input.analysis.orphans
	some patch in [json.unmarshal(o.removePatch), [{"op": "remove", "path": "/metadata/labels"}]]
	d := {"rule": "orphaned-field", "action": "warn", "auditFix": true, "message": sprintf("[orphaned-field] mine %d", [count(patch)]), "paths": [o.path], "patch": patch}
}
`
	cfg := policy.Config{Rules: map[string]policy.RuleConfig{"orphaned-field": {Action: policy.ActionOff, AuditFix: true}}}
	engine, err := policy.New(t.Context(), policy.WithConfig(cfg), policy.WithModules(map[string]string{"mine.rego": mine}))
	if err != nil {
		t.Fatal(err)
	}
	client := newFakeClient(append(readObjects(t, "deployments/restarted.yaml"), namespaceObject("shop", nil))...)
	report, err := NewScanner(client, testAnalyzer(t), engine).Scan(t.Context(), Target{})
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Message, NoFix string
		Fixed          bool
	}
	got := []view{}
	for _, f := range report.Findings {
		got = append(got, view{Message: f.Message, NoFix: f.NoFix, Fixed: f.Fix != nil})
	}
	want := []view{{Message: "[orphaned-field] mine 1"}, {Message: "[orphaned-field] mine 2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
