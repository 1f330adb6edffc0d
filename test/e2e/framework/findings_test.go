package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The truth models read the paths out of the messages of policy/rules/*.rego
// as kubectl prints them.
func TestParseOutput(t *testing.T) {
	const object = "Deployment ns/web"
	tests := map[string]struct {
		stderr     string
		want       []Finding
		wantOthers []string
	}{
		"an orphan warning names its field": {
			stderr: `Warning: [orphaned-field] Deployment ns/web: spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] ("2024-01-01T00:00:00Z", set by kubectl-rollout at 2024-01-01T00:00:00Z) is in neither your manifest nor last-applied, so kubectl apply will never remove it. Remove it with: kubectl patch deployments.apps/web -n ns --type=json -p '[]'`,
			want:   []Finding{{Action: warn, Rule: "orphaned-field", Path: "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"}},
		},
		"a revert that sets a value back": {
			stderr: `Warning: [apply-reverts-drift] Deployment ns/web: this apply sets spec.template.metadata.labels[apply-hygiene.io/change] back to "4", discarding "3" set by kubectl at 2024-01-01T00:00:00Z since the last apply. To keep that value, put it in your manifest before you apply; see every drifted field with: kubectl hygiene explain deployments.apps/web -n ns`,
			want:   []Finding{{Action: warn, Rule: "apply-reverts-drift", Path: "spec.template.metadata.labels[apply-hygiene.io/change]"}},
		},
		"a revert that removes a field": {
			stderr: `Warning: [apply-reverts-drift] Deployment ns/web: this apply removes spec.template.spec.containers[name=app].env[name=A], discarding {"name":"A","value":"1"} set by kubectl-set at 2024-01-01T00:00:00Z since the last apply. To keep…`,
			want:   []Finding{{Action: warn, Rule: "apply-reverts-drift", Path: "spec.template.spec.containers[name=app].env[name=A]"}},
		},
		"a denial lists every changed field, and kubectl's own warning is another": {
			stderr: "Warning: resource deployments/web was previously managed with 'kubectl apply'.\n" +
				`error: failed to patch image update to pod template: admission webhook "validate.apply-hygiene.io" denied the request: [imperative-edit] Deployment ns/web: this write by admin (field manager kubectl-set) changes fields that last-applied owns: spec.replicas (last-applied 3, now 5), spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.99"); the next kubectl apply puts the last-applied values back without a word.`,
			want: []Finding{
				{Action: deny, Rule: "imperative-edit", Path: "spec.replicas"},
				{Action: deny, Rule: "imperative-edit", Path: "spec.template.spec.containers[name=nginx].image"},
			},
			wantOthers: []string{"Warning: resource deployments/web was previously managed with 'kubectl apply'."},
		},
		"server-side-owned's warning on a restart of an object Argo CD applies names restartedAt": {
			stderr: `Warning: [server-side-owned] Deployment ns/web: kubectl rollout restart adds spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt], which Git does not have, to an object that Argo CD applies (field manager argocd-controller); with self-heal Argo CD syncs it away and the restart is undone.`,
			want:   []Finding{{Action: warn, Rule: "server-side-owned", Path: "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"}},
		},
		"a server-side-owned warning lists the applied fields": {
			stderr: `Warning: [server-side-owned] Deployment ns/web: this write by alice (field manager kubectl-set) changes fields that kustomize-controller applies server-side: spec.template.spec.containers[name=server].resources.requests.cpu (applied "100m", now "120m"), spec.replicas (applied 2, now 3); its next apply puts the applied values back. It is managed by Flux (kustomize-controller); make the change in the Git source of its Kustomization`,
			want: []Finding{
				{Action: warn, Rule: "server-side-owned", Path: "spec.template.spec.containers[name=server].resources.requests.cpu"},
				{Action: warn, Rule: "server-side-owned", Path: "spec.replicas"},
			},
		},
		// kubectl's own server-side apply (field manager kubectl, as
		// kubectl hygiene migrate leaves it) is named by the command
		// (soak seed 271126, sequence 067: the path was not read).
		"a server-side-owned warning of kubectl apply --server-side's fields": {
			stderr: `Warning: [server-side-owned] DaemonSet ns/node-exporter: this write by alice (field manager kubectl-label) changes fields that kubectl apply --server-side applied: metadata.labels[gen.example.com/m-4] (applied "v", now "o10"); the next kubectl apply --server-side of the manifest fails on the conflict, or puts the applied values back with --force-conflicts. Put the change in your manifest and apply it with: kubectl apply --server-side -f <manifest>`,
			want:   []Finding{{Action: warn, Rule: "server-side-owned", Path: "metadata.labels[gen.example.com/m-4]"}},
		},
		"a rule without a single field": {
			stderr: "Warning: [stale-last-applied] Deployment ns/web: rollout undo restored revision 1 but …",
			want:   []Finding{{Action: warn, Rule: "stale-last-applied", Path: ""}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, others := ParseOutput(object, tc.stderr)
			var findings []Finding
			for _, r := range got {
				findings = append(findings, r.Finding)
			}
			if diff := cmp.Diff(tc.want, findings); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOthers, others); diff != "" {
				t.Errorf("other warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// compare tells false findings from misses; a finding that is allowed but
// not wanted is neither.
func TestCompare(t *testing.T) {
	restarted := Orphan(TemplatePath.Key("metadata").Key("annotations").Key("kubectl.kubernetes.io/restartedAt"))
	stale := Finding{Action: warn, Rule: "stale-last-applied", Path: ""}
	tests := map[string]struct {
		want Expectation
		got  []Reported
		what []string
	}{
		"the expected findings, each once": {
			want: Expectation{Want: []Finding{restarted}},
			got:  []Reported{{Finding: restarted, Line: "a"}, {Finding: restarted, Line: "a"}},
		},
		"an allowed finding, present or not": {
			want: Expectation{Allowed: []Finding{stale}},
			got:  []Reported{{Finding: stale, Line: "b"}},
		},
		"a false warning, a false denial and a miss": {
			want: Expectation{Want: []Finding{restarted}},
			got:  []Reported{{Finding: Finding{Action: warn, Rule: "orphaned-field", Path: "spec.x"}, Line: "c"}, {Finding: Finding{Action: deny, Rule: "imperative-edit", Path: "spec.y"}, Line: "d"}},
			what: []string{FalseWarning, FalseDenial, Miss},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var what []string
			for _, m := range Compare(tc.want, tc.got) {
				what = append(what, m.What)
			}
			if diff := cmp.Diff(tc.what, what); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
		})
	}
}
