package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExplain(t *testing.T) {
	tests := map[string]struct {
		dir     string
		status  LastAppliedStatus
		drift   []string
		orphans []string
	}{
		"after the undo the image drifted and TO_BE_DELETED is an orphan": {
			dir: "seed004-undo", status: LastAppliedPresent,
			drift:   []string{"spec.template.spec.containers[name=nginx].image"},
			orphans: []string{"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]"},
		},
		"restartedAt is an orphan": {
			dir: "seed003-restarted-at", status: LastAppliedPresent,
			orphans: []string{"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"},
		},
		"kubectl set image is drift": {
			dir: "seed001-set-image-reverted", status: LastAppliedPresent,
			drift: []string{"spec.template.spec.containers[name=nginx].image"},
		},
		"without last-applied what kubectl create made is no orphan": {
			dir: "seed002-missing-last-applied", status: LastAppliedMissing,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, tc.dir)
			ex, err := NewAnalyzer().Explain(f.live)
			if err != nil {
				t.Fatal(err)
			}
			an := ex.Analysis
			if an.LastApplied.Status != tc.status {
				t.Errorf("last-applied status = %q, want %q", an.LastApplied.Status, tc.status)
			}
			if diff := cmp.Diff(tc.drift, paths(an.Drift)); diff != "" {
				t.Errorf("drift (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.orphans, paths(an.Orphans)); diff != "" {
				t.Errorf("orphans (-want +got):\n%s", diff)
			}
			golden(t, tc.dir, "explain.json", ex)
		})
	}
}

func TestAnalyzeLiveInvalidLastApplied(t *testing.T) {
	f := loadFixture(t, "seed000-primitive-clear")
	f.live.SetAnnotations(map[string]string{LastAppliedAnnotation: "[]"})
	an, err := NewAnalyzer().AnalyzeLive(f.live)
	if err != nil {
		t.Fatal(err)
	}
	if an.LastApplied.Status != LastAppliedInvalid {
		t.Errorf("status = %q, want invalid", an.LastApplied.Status)
	}
}

// A port whose protocol was edited differs from last-applied in the field
// sets, but kubectl's patch keys ports by containerPort alone: the next
// apply keeps it, so it is no drift.
func TestExplainPortProtocolIsNoDrift(t *testing.T) {
	f := loadFixture(t, "seed001-set-image-reverted")
	live := f.modified.DeepCopy()
	setLastApplied(t, live, f.modified)
	setContainer(live, "ports", []any{map[string]any{"containerPort": int64(80), "protocol": "UDP"}})
	an, err := NewAnalyzer().AnalyzeLive(live)
	if err != nil {
		t.Fatal(err)
	}
	if len(an.Drift) != 0 {
		t.Errorf("drift %v, want none", paths(an.Drift))
	}
}
