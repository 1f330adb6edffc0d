package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

func path(t *testing.T, s string) merge.Path {
	t.Helper()
	p, err := merge.ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFindingsFor(t *testing.T) {
	ref := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}
	base := func(edit func(an *merge.Analysis)) *merge.Analysis {
		an := &merge.Analysis{Object: ref, Operation: "apply", LastApplied: merge.LastAppliedInfo{Status: merge.LastAppliedPresent}}
		edit(an)
		return an
	}
	tests := map[string]struct {
		analysis *merge.Analysis
		want     []Finding
		contains string
	}{
		"replicas dropped with 5 live replicas is denied": {
			analysis: base(func(an *merge.Analysis) {
				an.ReplicasReset = &merge.FieldFact{Path: path(t, "spec.replicas"), Live: float64(5), LastApplied: float64(2)}
			}),
			want:     []Finding{{Rule: ruleReplicasReset, Action: actionDeny, Path: "spec.replicas", Object: ref}},
			contains: "kubectl apply edit-last-applied deployment.apps/web -n default",
		},
		"replicas dropped with 1 live replica only warns": {
			analysis: base(func(an *merge.Analysis) {
				an.ReplicasReset = &merge.FieldFact{Path: path(t, "spec.replicas"), Live: float64(1), LastApplied: float64(1)}
			}),
			want: []Finding{{Rule: ruleReplicasReset, Action: actionWarn, Path: "spec.replicas", Object: ref}},
		},
		"a rejected defaulted dependent is repaired": {
			analysis: base(func(an *merge.Analysis) {
				an.DefaultedDependents = []merge.FieldFact{{Path: path(t, "spec.strategy.rollingUpdate"), DependsOn: path(t, "spec.strategy.type"),
					Result: map[string]any{"maxSurge": "25%"}, Rejected: true}}
			}),
			want:     []Finding{{Rule: ruleDefaultedDependent, Action: actionRepair, Path: "spec.strategy.rollingUpdate", Object: ref}},
			contains: `the API server rejects the object. Add "rollingUpdate: null" under spec.strategy`,
		},
		"a missing last-applied warns": {
			analysis: base(func(an *merge.Analysis) { an.LastApplied.Status = merge.LastAppliedMissing }),
			want:     []Finding{{Rule: ruleMissing, Action: actionWarn, Path: lastAppliedPath, Object: ref}},
		},
		"a missing last-applied on a stored object says how to record it": {
			analysis: base(func(an *merge.Analysis) { an.LastApplied.Status = merge.LastAppliedMissing; an.Operation = "live" }),
			want:     []Finding{{Rule: ruleMissing, Action: actionWarn, Path: lastAppliedPath, Object: ref}},
			contains: "kubectl apply set-last-applied -f MANIFEST --create-annotation",
		},
		"an invalid last-applied warns with the reason": {
			analysis: base(func(an *merge.Analysis) {
				an.LastApplied = merge.LastAppliedInfo{Status: merge.LastAppliedInvalid, Error: "it names \"api\", not \"web\""}
			}),
			want:     []Finding{{Rule: ruleInvalid, Action: actionWarn, Path: lastAppliedPath, Object: ref}},
			contains: `it names "api", not "web"; analysis skipped`,
		},
		"too large annotations suggest server-side apply": {
			analysis: base(func(an *merge.Analysis) { an.LastAppliedTooLarge = true; an.AnnotationsBytes = 230000 }),
			want:     []Finding{{Rule: ruleTooLarge, Action: actionWarn, Path: "metadata.annotations", Object: ref}},
			contains: "--server-side",
		},
		"an imperative change is denied": {
			analysis: base(func(an *merge.Analysis) {
				an.ImperativeChanges = []merge.FieldFact{{Path: path(t, "spec.minReadySeconds"), LastApplied: float64(5), Result: float64(10),
					Owners: []merge.Owner{{Manager: "kubectl-edit", Operation: "Update"}}}}
			}),
			want: []Finding{{Rule: ruleImperativeEdit, Action: actionDeny, Path: "spec.minReadySeconds", Object: ref, Owners: []string{"kubectl-edit"}}},
		},
		"a stale last-applied after an undo is repaired": {
			analysis: base(func(an *merge.Analysis) {
				an.Rollback = &merge.Rollback{RevisionKind: "ReplicaSet", RevisionName: "web-1", Revision: 1, StaleLastApplied: true}
			}),
			want:     []Finding{{Rule: ruleStale, Action: actionRepair, Path: lastAppliedPath, Object: ref}},
			contains: "ReplicaSet web-1 (revision 1)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := findingsFor(tc.analysis, nil, "")
			if diff := cmp.Diff(tc.want, withoutMessages(got)); diff != "" {
				t.Fatalf("findings (-want +got):\n%s", diff)
			}
			msg := got[0].Message
			if !strings.HasPrefix(msg, "["+got[0].Rule+"] Deployment default/web: ") || !strings.Contains(msg, tc.contains) {
				t.Errorf("message %q does not start with the rule and object or lacks %q", msg, tc.contains)
			}
		})
	}
}

func TestValueIsCut(t *testing.T) {
	if got := value(strings.Repeat("a", 200)); len(got) > maxMessageValue+len("…") {
		t.Errorf("value is %d bytes long", len(got))
	}
	if got := value(nil); got != "nothing" {
		t.Errorf("value(nil) = %q", got)
	}
}
