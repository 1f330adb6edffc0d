package framework

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// diff's prediction leaves out the findings at a field that another
// mutating webhook stamps in the apply's own write; the webhook may still
// make such a finding, print it with the stamp's new value, or leave it
// out of the 4 KiB, and then the left-out line counts it (soak seed
// 271126, sequence 772: the mesh injector's stamp, which kubectl rollout
// undo had copied from a ReplicaSet, among the four orphans left out,
// after three printed).
func TestComparePredictionStamped(t *testing.T) {
	const (
		object = "[orphaned-field] Deployment demo/minio-deployment: "
		tail   = " is in neither your manifest nor last-applied, so kubectl apply will never remove it."
		mesh   = "metadata.annotations[mesh.example.com/injected-revision]"
	)
	orphan := func(path, value string) diffFinding {
		return diffFinding{Rule: "orphaned-field", Action: "warn", Path: path, Message: object + path + " (" + value + ", set by kubectl at 2026-11-27T12:20:34Z)" + tail}
	}
	warning := func(f diffFinding) string { return "Warning: " + f.Message }
	leftOut := func(n int) string {
		return fmt.Sprintf("Warning: [apply-hygiene] %d more warnings (%d orphaned-field) left out: the API server passes on at most 4 KiB of warnings for a write. See every finding with: kubectl hygiene explain deployments.apps/minio-deployment -n demo", n, n)
	}
	a, b := orphan("metadata.annotations[gen.example.com/a]", `"v"`), orphan("metadata.annotations[gen.example.com/b]", `"v"`)
	c, d := orphan("metadata.labels[gen.example.com/c]", `"v"`), orphan("metadata.labels[gen.example.com/d]", `"v"`)
	stamp := orphan(mesh, `"659"`)
	isMesh := func(path string) bool { return path == mesh }
	tests := map[string]struct {
		findings []diffFinding
		stamped  func(string) bool
		stderr   []string
		want     []string
	}{
		"the stamp's orphan left out with two others: the left-out line counts three": {
			findings: []diffFinding{a, b, stamp, c, d},
			stamped:  isMesh,
			stderr:   []string{warning(a), warning(b), leftOut(3)},
		},
		"the stamp's orphan not made: the left-out line counts two": {
			findings: []diffFinding{a, b, stamp, c, d},
			stamped:  isMesh,
			stderr:   []string{warning(a), warning(b), leftOut(2)},
		},
		"the stamp's orphan printed with the new stamp": {
			findings: []diffFinding{a, b, stamp, c, d},
			stamped:  isMesh,
			stderr:   []string{warning(a), warning(b), warning(orphan(mesh, `"660"`)), leftOut(2)},
		},
		"the stamp's orphan printed cannot be left out as well": {
			findings: []diffFinding{a, b, stamp, c, d},
			stamped:  isMesh,
			stderr:   []string{warning(a), warning(b), warning(orphan(mesh, `"660"`)), leftOut(3)},
			want:     []string{"step 20: the warnings left out are map[orphaned-field:2] by rule, and the summary counts map[orphaned-field:3]"},
		},
		"without a stamped field the left-out line counts exactly what diff predicts": {
			findings: []diffFinding{a, b, c, d},
			stderr:   []string{warning(a), warning(b), leftOut(3)},
			want:     []string{"step 20: the warnings left out are map[orphaned-field:2] by rule, and the summary counts map[orphaned-field:3]"},
		},
		"one left out that diff did not predict is more than the stamp's": {
			findings: []diffFinding{a, b, stamp, c, d},
			stamped:  isMesh,
			stderr:   []string{warning(a), warning(b), leftOut(4)},
			want:     []string{"step 20: the warnings left out are map[orphaned-field:2] by rule, and the summary counts map[orphaned-field:4] (with up to map[orphaned-field:1] at stamped fields)"},
		},
	}
	// The apply's patch removes the stamp, which the mesh stamps back in
	// the write: last-applied is then its only change, a hand-over to the
	// webhooks, which print nothing (generative seed 281168, sequence 004,
	// step 18).
	revert := diffFinding{Rule: "apply-reverts-drift", Action: "warn", Path: mesh,
		Message: "[apply-reverts-drift] Deployment demo/minio-deployment: this apply removes " + mesh + ", discarding \"235\" set by an unknown writer since the last apply."}
	tests["the stamp removed and back: nothing printed"] = struct {
		findings []diffFinding
		stamped  func(string) bool
		stderr   []string
		want     []string
	}{findings: []diffFinding{revert, a}, stamped: isMesh}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, _ := comparePrediction("step 20", tc.findings, 0, strings.Join(tc.stderr, "\n")+"\n", tc.stamped)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// Only the stamp's own change excuses silence: an apply that leaves the
// stamp alone and prints nothing of what diff predicted is a miss.
func TestComparePredictionSilenceNeedsTheStampChanged(t *testing.T) {
	const mesh = "metadata.annotations[mesh.example.com/injected-revision]"
	orphan := diffFinding{Rule: "orphaned-field", Action: "warn", Path: "metadata.labels[gen.example.com/c]",
		Message: "[orphaned-field] Deployment demo/web: metadata.labels[gen.example.com/c] (\"v\", set by kubectl at 2026-11-27T12:20:34Z) is in neither your manifest nor last-applied, so kubectl apply will never remove it."}
	stampOrphan := diffFinding{Rule: "orphaned-field", Action: "warn", Path: mesh, Message: "[orphaned-field] Deployment demo/web: " + mesh + " (\"1\") is in neither your manifest nor last-applied."}
	for _, findings := range [][]diffFinding{{orphan}, {orphan, stampOrphan}} {
		if got, _ := comparePrediction("step 9", findings, 0, "\n", func(p string) bool { return p == mesh }); len(got) == 0 {
			t.Errorf("findings %v, nothing printed: no problem reported", findings)
		}
	}
}
