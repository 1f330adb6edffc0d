package policy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigValidate(t *testing.T) {
	tests := map[string]struct {
		config Config
		want   []string
	}{
		"the zero config is valid": {},
		"every exemption kind is accepted": {
			config: Config{Exemptions: Exemptions{
				Users: []string{"admin"}, Groups: []string{"ci"}, ServiceAccounts: []string{"argocd/*", "ci/deployer"},
				FieldManagers: []string{"helm", "Terraform", "kubectl-client-side-apply", strings.Repeat("m", 128)},
			}},
		},
		"an unknown action is named by its rule and field": {
			config: Config{Rules: map[string]RuleConfig{"replicas-reset": {ServiceAccountAction: "block"}}},
			want:   []string{`rules[replicas-reset].serviceAccountAction: Unsupported value: "block": supported values: "deny", "warn", "dryrun", "repair", "prune", "off"`},
		},
		"a service account without a namespace is refused": {
			config: Config{Exemptions: Exemptions{ServiceAccounts: []string{"deployer"}}},
			want:   []string{`exemptions.serviceAccounts[0]: Invalid value: "deployer": must be "namespace/name" or "namespace/*"`},
		},
		"an empty field manager would exempt writes that name none": {
			config: Config{Exemptions: Exemptions{FieldManagers: []string{"helm", ""}}},
			want:   []string{"exemptions.fieldManagers[1]: Required value: a field manager name"},
		},
		"deployment tools and their action": {
			config: Config{DeployTools: []string{"helm", "HashiCorp"}, Rules: map[string]RuleConfig{"imperative-edit": {DeployToolAction: "deny"}}},
		},
		"a deployment tool without a name, or with an unknown action, is refused": {
			config: Config{DeployTools: []string{""}, Rules: map[string]RuleConfig{"imperative-edit": {DeployToolAction: "allow"}}},
			want: []string{
				`rules[imperative-edit].deployToolAction: Unsupported value: "allow": supported values: "deny", "warn", "dryrun", "repair", "prune", "off"`,
				"deployTools[0]: Required value: a field manager name",
			},
		},
		"a field manager the API server refuses is refused": {
			config: Config{Exemptions: Exemptions{FieldManagers: []string{strings.Repeat("m", 129), "ci\tbot"}}},
			want: []string{
				"exemptions.fieldManagers[0]: Too long: may not be more than 128 bytes",
				`exemptions.fieldManagers[1]: Invalid value: "ci\tbot": invalid character U+0009 (at position 2)`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := []string{}
			for _, err := range tc.config.Validate() {
				got = append(got, err.Error())
			}
			if tc.want == nil {
				tc.want = []string{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}
