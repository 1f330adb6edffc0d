package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

func TestPlanFixes(t *testing.T) {
	web := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	sts := merge.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "shop", Name: "db"}
	envPatch := func(i int, name string) string {
		return fmt.Sprintf(`[{"op":"test","path":"/spec/template/spec/containers/0/env/%d/name","value":%q},{"op":"remove","path":"/spec/template/spec/containers/0/env/%d"}]`, i, name, i)
	}
	orphan := func(ref merge.ObjectRef, path, patch string) Finding {
		return Finding{Rule: policy.RuleOrphanedField, Object: ref, Path: path, Fix: orphanFix(t, patch)}
	}
	stale := Finding{Rule: policy.RuleStaleLastApplied, Object: sts, Path: "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]",
		Fix: repairFix(`{"a":1}`+"\n", "")}
	edit := Finding{Rule: policy.RuleImperativeEdit, Object: web, Path: "spec.replicas"}
	findings := []Finding{
		orphan(web, "spec.template.spec.containers[name=nginx].env[name=A]", envPatch(1, "A")),
		orphan(web, "spec.template.spec.containers[name=nginx].env[name=B]", envPatch(10, "B")),
		edit,
		orphan(sts, "metadata.labels[x]", `[{"op":"test","path":"/metadata/labels/x","value":"y"},{"op":"remove","path":"/metadata/labels/x"}]`),
		stale,
	}
	fixes, notFixed, deferred := PlanFixes(findings)
	if len(fixes) != 2 || fixes[0].Object != web || fixes[1].Object != sts {
		t.Fatalf("fixes = %+v, want web's then db's", fixes)
	}
	if diff := cmp.Diff([]Finding{edit}, notFixed); diff != "" {
		t.Errorf("not fixed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Finding{findings[3]}, deferred); diff != "" {
		t.Errorf("deferred until the repair (-want +got):\n%s", diff)
	}
	tests := map[string]struct {
		fix  *ObjectFix
		want string
	}{
		"every test first, last-applied as scanned too, then the removals from the end of the list backwards": {
			fix: fixes[0],
			want: `[{"op":"test","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","value":"{}\n"},` +
				`{"op":"test","path":"/spec/template/spec/containers/0/env/1/name","value":"A"},{"op":"test","path":"/spec/template/spec/containers/0/env/10/name","value":"B"},` +
				`{"op":"remove","path":"/spec/template/spec/containers/0/env/10"},{"op":"remove","path":"/spec/template/spec/containers/0/env/1"}]`,
		},
		"the repair tests the annotation as scanned before it replaces it": {
			fix: fixes[1],
			want: `[{"op":"test","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","value":"{}\n"},` +
				`{"op":"replace","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","value":"{\"a\":1}\n"}]`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.fix.Patch()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

// The fix's summary joins its findings' summaries, which the rules wrote
// (whether a removal rolls the pods is the orphaned-field rule's
// judgement, tested in policy/rules).
func TestFixSummaryJoinsTheFindingsSummaries(t *testing.T) {
	of := &ObjectFix{Removals: []Finding{
		{Path: "spec.template.metadata.annotations[a]", Fix: &Fix{Summary: "removed spec.template.metadata.annotations[a] (rolls the pods)"}},
		{Path: "metadata.labels[b]", Fix: &Fix{Summary: "removed metadata.labels[b]"}},
	}}
	want := "removed spec.template.metadata.annotations[a] (rolls the pods); removed metadata.labels[b]"
	if got := of.Summary(); got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
}

// A repair is written as the Update manager that owns last-applied, and
// nothing else may ride on that write: a removal under kubectl's name
// would be attributed to it and reviewed as a client-side apply.
// PlanFixes defers the orphans of a repaired object to the next audit, and
// a fix built with both is refused rather than written as the repair's
// manager.
func TestRepairNeverCarriesRemovals(t *testing.T) {
	sts := merge.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "shop", Name: "db"}
	stale := Finding{Rule: policy.RuleStaleLastApplied, Object: sts, Path: "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]",
		Fix: repairFix(`{"a":1}`+"\n", "kubectl-client-side-apply")}
	orphan := Finding{Rule: policy.RuleOrphanedField, Object: sts, Path: "metadata.labels[x]",
		Fix: orphanFix(t, `[{"op":"test","path":"/metadata/labels/x","value":"y"},{"op":"remove","path":"/metadata/labels/x"}]`)}

	fixes, _, deferred := PlanFixes([]Finding{orphan, stale})
	if len(fixes) != 1 || fixes[0].Repair == nil || len(fixes[0].Removals) != 0 || fixes[0].FieldManager() != "kubectl-client-side-apply" {
		t.Fatalf("PlanFixes = %+v, want one repair without removals, as kubectl-client-side-apply", fixes)
	}
	if diff := cmp.Diff([]Finding{orphan}, deferred); diff != "" {
		t.Errorf("deferred (-want +got):\n%s", diff)
	}

	both := &ObjectFix{Object: sts, Repair: &stale, Removals: []Finding{orphan}}
	patch, err := both.Patch()
	if err == nil {
		t.Fatalf("Patch of a repair with a removal = %s, want an error: the removal would be written as %s", patch, both.FieldManager())
	}
	if want := "a repair of last-applied and removals are never written together"; !strings.Contains(err.Error(), want) {
		t.Errorf("Patch error = %q, want one saying %q", err, want)
	}
}

// orphanFix is the fix of an orphan whose guarded remove patch is
// removePatch, as a scan fills it in: the orphaned-field rule's audit
// decision carries the remove patch as its patch.
func orphanFix(t *testing.T, removePatch string) *Fix {
	t.Helper()
	var patch policy.Patch
	if err := json.Unmarshal([]byte(removePatch), &patch); err != nil {
		t.Fatal(err)
	}
	return &Fix{Patch: patch, LastApplied: "{}\n"}
}

// repairFix is the fix of a stale last-applied, scanned as "{}\n", that
// writes repaired as manager: the stale-last-applied rule's audit
// decision replaces the annotation.
func repairFix(repaired, manager string) *Fix {
	return &Fix{Patch: policy.Patch{{Op: policy.OpReplace, Path: lastAppliedPointer, Value: repaired}},
		LastApplied: "{}\n", Manager: manager}
}
