package audit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// TestScanOwnership: the audit drops the findings about fields that the
// configuration's ownership rules declare, as admission does: seed 004's
// StatefulSet without its revisions (a kubectl-patch put the image back
// and an env var) has drift and an orphan, each gone when declared, and
// left when another field or another manager is declared.
func TestScanOwnership(t *testing.T) {
	sts := merge.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "default", Name: "my-wonderhoy-app"}
	const uid = "d2287d0e-ea2f-4d0c-b678-c08a32bc4f5a"
	image := Finding{Rule: "imperative-edit", Action: policy.ActionDeny, Path: "spec.template.spec.containers[name=nginx].image", Object: sts, UID: uid}
	env := Finding{Rule: "orphaned-field", Action: policy.ActionWarn, Path: "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", Object: sts, UID: uid}
	tests := map[string]struct {
		config string
		want   []Finding
	}{
		"without rules both are reported": {
			config: "ownership: []", want: []Finding{image, env},
		},
		"images owned by the cluster leave the orphan": {
			config: "ownership: [{kinds: [apps/StatefulSet], paths: ['spec.template.spec.containers[*].image'], owner: cluster}]",
			want:   []Finding{env},
		},
		"containers owned by kubectl-patch, which wrote both, leave nothing": {
			config: "ownership: [{kinds: [StatefulSet], paths: ['spec.template.spec.containers'], owner: kubectl-patch}]",
			want:   []Finding{},
		},
		"containers owned by kubectl-edit, which wrote neither, leave both": {
			config: "ownership: [{kinds: [StatefulSet], paths: ['spec.template.spec.containers'], owner: kubectl-edit}]",
			want:   []Finding{image, env},
		},
		"an Argo CD entry for another kind leaves both": {
			config: "ownership: [{argoCD: {group: apps, kind: Deployment, jsonPointers: [/spec/template/spec/containers]}}]",
			want:   []Finding{image, env},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var cfg policy.Config
			if err := yaml.UnmarshalStrict([]byte(tc.config), &cfg); err != nil {
				t.Fatal(err)
			}
			engine, err := policy.New(t.Context(), policy.WithConfig(cfg))
			if err != nil {
				t.Fatal(err)
			}
			objs := readObjects(t, "seed004/statefulset.yaml")
			setManager(objs[0], "kubectl", "kubectl-patch")
			s := NewScanner(newFakeClient(objs[0]), testAnalyzer(t), engine)
			report, err := s.Scan(t.Context(), Target{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, withoutMessages(report.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
