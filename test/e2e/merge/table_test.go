package merge_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// TestDifferential applies each scenario of testdata with the real kubectl
// to the real API server and checks, for every apply onto an existing
// object, that merge predicted exactly what the server stored (see
// comparePrediction), and for the last apply, the facts merge reports.
func TestDifferential(t *testing.T) {
	tests := map[string]scenario{
		// Seeds 000/001, the merge tables: primitives.
		"a primitive in the file and in live takes the file's value": {dir: "primitive-set-live-has-it"},
		"a primitive in the file but not in live is added":           {dir: "primitive-set-live-lacks-it"},
		"minReadySeconds dropped from the file is cleared":           {dir: "primitive-clear-min-ready-seconds"},
		"a primitive set by kubectl patch is kept and orphaned": {
			dir: "primitive-keep-orphan", orphans: []string{"spec.minReadySeconds by kubectl-patch"},
		},
		// Maps.
		"a map key in the file and in live merges its value": {dir: "map-compare-subfields"},
		"a map key in the file but not in live is added":     {dir: "map-add-key"},
		"a map key dropped from the file is deleted":         {dir: "map-delete-key"},
		"a label set by kubectl label is kept and orphaned": {
			dir: "map-keep-key-orphan", orphans: []string{"metadata.labels.owner by kubectl-label"},
		},
		// Lists of maps by merge key: the live elements stay first, the new
		// one is appended, and the server defaults the new container.
		"containers merge by name: a deleted, b kept, c added, d kept": {
			dir: "containers-merged-by-name",
			defaulted: map[string][]string{"2-manifest.yaml": {
				"spec.template.spec.containers[name=nginx-helper-c].imagePullPolicy",
				"spec.template.spec.containers[name=nginx-helper-c].resources",
				"spec.template.spec.containers[name=nginx-helper-c].terminationMessagePath",
				"spec.template.spec.containers[name=nginx-helper-c].terminationMessagePolicy",
			}},
			orphans: []string{
				"spec.template.spec.containers[name=nginx-helper-b].args by kubectl-patch",
				"spec.template.spec.containers[name=nginx-helper-d] by kubectl-patch",
			},
		},
		"an env var dropped from the file is removed, one set by kubectl set env stays": {
			dir: "env-removed", orphans: []string{"spec.template.spec.containers[name=app].env[name=C] by kubectl-set"},
		},
		"ports merge by containerPort and the new one gets protocol TCP": {
			dir: "ports-merged-by-container-port",
			defaulted: map[string][]string{"2-80-8080.yaml": {
				"spec.template.spec.containers[name=nginx].ports[containerPort=8080,protocol=TCP].protocol",
			}},
		},
		"volumes and volume mounts merge by their keys": {dir: "volumes-merged-by-name"},
		// Lists of primitives.
		"args without patchStrategy are replaced, losing the patched d": {
			dir: "args-replaced", reverts: []string{"spec.template.spec.containers[name=app].args by kubectl-patch"},
		},
		"finalizers merge as a set: b goes, c comes, the patched d stays": {
			dir: "finalizers-merged", orphans: []string{"metadata.finalizers[=apply-hygiene.io/d] by kubectl-patch"},
		},
		// Labels and annotations.
		"annotations and labels are added and removed, one set by kubectl annotate stays": {
			dir: "annotations-added-removed", orphans: []string{"metadata.annotations[example.com/d] by kubectl-annotate"},
		},
		// Seeds 001/002: ownership of replicas.
		"replicas set by kubectl scale survive the next apply, minReadySeconds goes": {dir: "scale-then-apply"},
		"replicas owned by last-applied are scaled back": {
			dir: "scale-owned-replicas-reverted", reverts: []string{"spec.replicas by kubectl"},
		},
		// merge leaves replicas out; the server defaults them back to 1.
		"replicas dropped from the file are deleted, then re-defaulted to 1 by the server": {
			dir:           "replicas-removed-redefaulted",
			defaulted:     map[string][]string{"2-replicas-removed.yaml": {"spec.replicas"}},
			replicasReset: true,
		},
		// Imperative changes that apply reverts.
		"an image set by kubectl set image is reverted": {
			dir: "set-image-reverted", reverts: []string{"spec.template.spec.containers[name=nginx].image by kubectl-set"},
		},
		"a field changed by kubectl edit is reverted, a label it added stays": {
			dir:     "edit-reverted",
			orphans: []string{"metadata.labels.edited by kubectl-edit"},
			reverts: []string{"spec.minReadySeconds by kubectl-edit"},
		},
		// kubectl counts the deletion of a field changed since the last apply
		// as a conflict (--overwrite=false refuses it): a revert.
		"an explicit null in the file clears fields that apply would keep": {
			dir:     "explicit-null-clears",
			reverts: []string{"metadata.labels.owner by kubectl-patch", "spec.minReadySeconds by kubectl-patch"},
		},
		// kubectl create owns what it made, server defaults included:
		// ownership cannot tell its settings from defaults, so nothing it
		// made is an orphan, and the first apply's changes to it are no
		// reverts (nobody changed them since an apply). The
		// missing-last-applied rule reports the object.
		"without last-applied the first apply deletes nothing": {
			dir: "missing-last-applied",
		},
		// Seeds 003 and 004.
		"restartedAt of rollout restart is orphaned, owned by kubectl-rollout": {
			dir: "seed003-rollout-restart", orphans: []string{"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] by kubectl-rollout"},
		},
		"TO_BE_DELETED restored by rollout undo is orphaned, owned by kubectl": {
			dir:     "seed004-rollout-undo",
			orphans: []string{"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED] by kubectl"},
			reverts: []string{"spec.template.spec.containers[name=nginx].image by kubectl"},
		},
		// Seed 002 and the design: defaulted dependents.
		"Recreate drops the defaulted rollingUpdate by $retainKeys": {dir: "deployment-recreate-retain-keys"},
		"a StatefulSet switched to OnDelete is rejected for its defaulted rollingUpdate": {
			dir: "statefulset-ondelete-rejected",
			rejected: `The StatefulSet "web" is invalid: spec.updateStrategy.rollingUpdate: Invalid value: {"Partition":0,"MaxUnavailable":1}: ` +
				`only allowed for updateStrategy 'RollingUpdate'`,
			dependents: []string{"spec.updateStrategy.rollingUpdate (rejected)"},
		},
		"a DaemonSet switched to OnDelete keeps a stale rollingUpdate": {
			dir: "daemonset-ondelete-stale", dependents: []string{"spec.updateStrategy.rollingUpdate"},
		},
		// Custom resources: JSON merge patch.
		// Custom resources: JSON merge patch. A list is atomic there: the
		// patch replaced it whole, and owners are whoever wrote it.
		"a custom object merges maps and replaces lists": {
			dir: "crd-maps-merged-lists-replaced", strategy: merge.JSONMergePatch,
			orphans: []string{"spec.color by kubectl-patch", "spec.labels.d by kubectl-patch"},
			reverts: []string{"spec.items by kubectl-patch"},
		},
		"a custom object's list of primitives is replaced": {
			dir: "cr-list-of-primitives", strategy: merge.JSONMergePatch,
			reverts: []string{"spec.tags by kubectl-client-side-apply, kubectl-patch"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runScenario(t, tc)
		})
	}
}
