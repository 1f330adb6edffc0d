package policy

import (
	"path"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// loadOwnershipConfig decodes testdata/ownership/<name>.yaml as the server
// and the CLI read --policy-config (strict YAML), and validates it.
func loadOwnershipConfig(t *testing.T, name string) (Config, []string) {
	t.Helper()
	raw, err := fixtures.ReadFile(path.Join("testdata", "ownership", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		return c, []string{err.Error()}
	}
	var got []string
	for _, e := range c.Validate() {
		got = append(got, e.Error())
	}
	return c, got
}

func TestOwnershipConfig(t *testing.T) {
	tests := map[string]struct {
		file string
		want []string
	}{
		"the own form with every kind form, a namespace and a selector is valid": {file: "own-form"},
		"Argo CD's jsonPointers and managedFieldsManagers are accepted":          {file: "argocd"},
		"Flux's paths and target are accepted":                                   {file: "flux"},
		"a dotted annotation key, an unterminated bracket and an empty path are refused": {
			file: "bad-paths",
			want: []string{
				`ownership[0].paths[0]: Invalid value: "metadata.annotations.sidecar.istio.io/status": parsing path "metadata.annotations.sidecar.istio.io/status": invalid field name "io/status"`,
				`ownership[0].paths[1]: Invalid value: "spec.template.spec.containers[name=web.image": parsing path "spec.template.spec.containers[name=web.image": unterminated "[name=web.image"`,
				`ownership[0].paths[2]: Invalid value: "": empty path`,
			},
		},
		"a resource for a kind, a version in the group and no kinds are refused": {
			file: "bad-kinds",
			want: []string{
				`ownership[0].kinds[0].kind: Invalid value: "deployments.apps": a kind is written as the API's kind, e.g. Deployment (not the resource, deployments), or "*"`,
				`ownership[0].kinds[1].group: Invalid value: "apps/v1": a group is an API group without its version, e.g. apps for apps/v1 ("Kind", "group/Kind", "*" or {group, kind})`,
				`ownership[1].kinds: Required value: at least one kind: "Kind", "group/Kind", "*" or {group, kind}`,
			},
		},
		"a bad selector operator, Flux's bad label selector, annotation selector and regexp are refused": {
			file: "bad-selector",
			want: []string{
				`ownership[0].selector: Invalid value: "Sometimes" is not a valid label selector operator`,
				`ownership[1].flux.target.annotationSelector: Invalid value: "team=a": annotation selectors are not supported: select by labelSelector, kind, name or namespace`,
				`ownership[1].flux.target.labelSelector: Invalid value: "app in web": unable to parse requirement: found 'web' expected: '('`,
				"ownership[1].flux.target.name: Invalid value: \"web((\": not a regular expression: error parsing regexp: missing closing ): `^(?:web(()$`",
			},
		},
		"a missing owner, no paths and a field manager the API server refuses are refused": {
			file: "bad-owner",
			want: []string{
				`ownership[0].owner: Required value: "cluster" or a field manager name`,
				`ownership[1].owner: Invalid value: "ci\tbot": invalid character U+0009 (at position 2)`,
				`ownership[1].paths: Required value: at least one path`,
			},
		},
		"jq, a list position, a mixed entry and an entry without fields are refused": {
			file: "bad-argocd",
			want: []string{
				`ownership[0].argoCD.jqPathExpressions: Invalid value: ".spec.template.spec.initContainers[] | select(.name == \"injected\")": jq path expressions are not supported: write them as jsonPointers, or as an ownership rule's paths with * for any list element or map key (spec.template.spec.containers[*].image)`,
				`ownership[1].argoCD.jsonPointers[0]: Invalid value: "/spec/template/spec/containers/0/image": JSON pointer "/spec/template/spec/containers/0/image": segment "0" is a list position, which differs from object to object; write the path in apply-hygiene's notation with [*] or the element's key, e.g. spec.template.spec.containers[*]`,
				`ownership[2].argoCD: Invalid value: "": an Argo CD entry stands alone: no flux, kinds, paths, owner, namespace, name or selector beside it`,
				`ownership[3].argoCD: Required value: jsonPointers or managedFieldsManagers`,
			},
		},
		"an unknown field is refused when the file is read": {
			file: "bad-field",
			want: []string{`error unmarshaling JSON: while decoding JSON: json: unknown field "manager"`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, got := loadOwnershipConfig(t, tc.file)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOwnershipDropsFacts evaluates the policy fixtures with ownership
// rules: the decisions about a declared field are gone, the others stay.
func TestOwnershipDropsFacts(t *testing.T) {
	tests := map[string]struct {
		input  string
		config string
		want   []RuleID
	}{
		"kubectl scale of replicas is denied without a rule": {
			input: "scale", config: "ownership: []",
			want: []RuleID{RuleImperativeEdit},
		},
		"kubectl scale of replicas the cluster owns passes": {
			input: "scale", config: "ownership: [{kinds: [apps/Deployment], paths: [spec.replicas], owner: cluster}]",
		},
		"Argo CD's jsonPointer for replicas passes kubectl scale": {
			input: "scale", config: "ownership: [{argoCD: {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}}]",
		},
		"Flux's path for replicas passes kubectl scale": {
			input: "scale", config: "ownership: [{flux: {paths: [/spec/replicas], target: {kind: Deployment}}}]",
		},
		"replicas owned by the scale's own manager pass it": {
			input: "scale", config: "ownership: [{kinds: [Deployment], paths: [spec.replicas], owner: kubectl}]",
		},
		"replicas owned by another manager do not pass kubectl scale": {
			input: "scale", config: "ownership: [{kinds: [Deployment], paths: [spec.replicas], owner: kube-controller-manager}]",
			want: []RuleID{RuleImperativeEdit},
		},
		"a rule for another kind leaves the edit denied": {
			input: "scale", config: "ownership: [{kinds: [StatefulSet], paths: [spec.replicas], owner: cluster}]",
			want: []RuleID{RuleImperativeEdit},
		},
		"a rule for another namespace leaves the edit denied": {
			input: "scale", config: "ownership: [{kinds: [Deployment], namespace: shop, paths: [spec.replicas], owner: cluster}]",
			want: []RuleID{RuleImperativeEdit},
		},
		"a rule for another path leaves the edit denied": {
			input: "scale", config: "ownership: [{kinds: [Deployment], paths: [spec.paused], owner: cluster}]",
			want: []RuleID{RuleImperativeEdit},
		},
		"images owned by the cluster pass kubectl edit of an image": {
			input: "imperative", config: "ownership: [{kinds: ['*'], paths: ['spec.template.spec.containers[*].image'], owner: cluster}]",
		},
		"an apply that reverts replicas the cluster owns is no revert": {
			input: "apply-reverts-drift", config: "ownership: [{kinds: [Deployment], paths: [spec.replicas], owner: cluster}]",
		},
		"an apply that drops replicas the cluster owns is no reset": {
			input: "replicas-reset", config: "ownership: [{kinds: [Deployment], paths: [spec.replicas], owner: cluster}]",
		},
		"restartedAt owned by the cluster is no orphan": {
			input:  "client-side-apply",
			config: "ownership: [{kinds: [Deployment], paths: ['spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]'], owner: cluster}]",
		},
		"restartedAt owned by kubectl-rollout, which set it, is no orphan": {
			input:  "client-side-apply",
			config: "ownership: [{kinds: [Deployment], paths: ['spec.template.metadata.annotations.*'], owner: kubectl-rollout}]",
		},
		"restartedAt owned by another manager is still an orphan": {
			input:  "client-side-apply",
			config: "ownership: [{kinds: [Deployment], paths: ['spec.template.metadata.annotations.*'], owner: kubectl-annotate}]",
			want:   []RuleID{RuleOrphanedField},
		},
		"a selector that does not select the object leaves the orphan": {
			input:  "client-side-apply",
			config: "ownership: [{kinds: [Deployment], selector: {matchLabels: {mesh: istio}}, paths: ['spec.template.metadata.annotations.*'], owner: cluster}]",
			want:   []RuleID{RuleOrphanedField},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var c Config
			if err := yaml.UnmarshalStrict([]byte(tc.config), &c); err != nil {
				t.Fatal(err)
			}
			e := newEngine(t, WithConfig(c))
			in := loadInput(t, tc.input)
			before := len(in.Analysis.ImperativeChanges) + len(in.Analysis.Reverts) + len(in.Analysis.Orphans)
			ds, err := e.Evaluate(t.Context(), in)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			var got []RuleID
			for _, d := range ds {
				got = append(got, d.Rule)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules decided (-want +got):\n%s", diff)
			}
			if after := len(in.Analysis.ImperativeChanges) + len(in.Analysis.Reverts) + len(in.Analysis.Orphans); after != before {
				t.Errorf("Evaluate changed its input: %d facts before, %d after", before, after)
			}
		})
	}
}
