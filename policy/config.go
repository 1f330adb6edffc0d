package policy

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultNamespaceLabel is the namespace label whose value ("warn",
// "dryrun" or "off") overrides the actions of every rule there.
const DefaultNamespaceLabel = "apply-hygiene.io/enforcement"

// Config is the rule configuration, the data document
// data.applyhygiene.config. The bundled Rego holds the defaults and merges
// Config over them: a field left empty keeps its default. docs/rules.md
// lists each rule's defaults.
type Config struct {
	// Rules configures rules by ID. Default: each rule's action in
	// docs/rules.md.
	Rules map[string]RuleConfig `json:"rules,omitempty"`
	// BreakGlassGroups are groups whose members get each rule's
	// BreakGlassAction. Default: none.
	BreakGlassGroups []string `json:"breakGlassGroups,omitempty"`
	// DeployTools are the field managers of deployment tools that apply
	// their own manifests with Update writes rather than server-side apply
	// (Helm 3's upgrade and rollback, a three-way patch under "helm"): a
	// write under one of them is that tool's apply, whoever runs it, and
	// gets each rule's DeployToolAction. Default: ["helm"]; a list given
	// replaces it.
	DeployTools []string `json:"deployTools,omitempty"`
	// Exemptions are users and field managers whose writes get no
	// decisions at all. Default: none.
	Exemptions Exemptions `json:"exemptions,omitzero"`
	// NamespaceLabel is the namespace label that overrides actions.
	// Default: DefaultNamespaceLabel.
	NamespaceLabel string `json:"namespaceLabel,omitempty"`
	// Ownership declares fields that something other than the manifest
	// writes, which no rule reports (see OwnershipRule). Default: none.
	Ownership []OwnershipRule `json:"ownership,omitempty"`
}

// RuleConfig configures one rule. Empty fields keep the rule's defaults.
type RuleConfig struct {
	// Action is the rule's action; ActionOff disables the rule.
	Action Action `json:"action,omitempty"`
	// ServiceAccountAction, when set, is the action for service accounts.
	ServiceAccountAction Action `json:"serviceAccountAction,omitempty"`
	// BreakGlassAction, when set, is the action for members of a
	// break-glass group. It wins over DeployToolAction and
	// ServiceAccountAction.
	BreakGlassAction Action `json:"breakGlassAction,omitempty"`
	// DeployToolAction, when set, is the action for writes whose field
	// manager is one of Config's DeployTools. It wins over
	// ServiceAccountAction. imperative-edit's default is warn.
	DeployToolAction Action `json:"deployToolAction,omitempty"`
	// AuditFix lets the audit fix (the server's --audit-fix) write this
	// rule's fixes where the rule's action is warn, which otherwise only
	// reports. Actions repair and prune always let the fix write; dryrun,
	// deny and off never do. Default: false.
	AuditFix bool `json:"auditFix,omitempty"`
	// Params are free-form settings for user policies, which read them as
	// data.applyhygiene.lib.config.rules[<rule>].params.
	Params map[string]any `json:"params,omitempty"`
}

// Exemptions lists users and field managers that no rule applies to.
type Exemptions struct {
	// Users are usernames.
	Users []string `json:"users,omitempty"`
	// Groups are groups; any member is exempt.
	Groups []string `json:"groups,omitempty"`
	// ServiceAccounts are "namespace/name", or "namespace/*" for every
	// service account of a namespace.
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
	// FieldManagers are field manager names: a write whose effective field
	// manager (Input's Request.FieldManager, e.g. "helm") is one of them is
	// exempt, whoever sends it. For tools and CI robots that are not
	// service accounts. The client chooses its field manager
	// (--field-manager), so this is a convenience, not access control.
	FieldManagers []string `json:"fieldManagers,omitempty"`
}

// Validate checks c: known actions, well-formed service accounts, field
// managers that the API server accepts (not empty, at most 128 printable
// characters), and ownership rules that compile (paths, kinds, selectors,
// owners).
func (c Config) Validate() field.ErrorList {
	var errs field.ErrorList
	rules := field.NewPath("rules")
	for _, name := range slices.Sorted(maps.Keys(c.Rules)) {
		rc, p := c.Rules[name], rules.Key(name)
		errs = append(errs, validateAction(p.Child("action"), rc.Action)...)
		errs = append(errs, validateAction(p.Child("serviceAccountAction"), rc.ServiceAccountAction)...)
		errs = append(errs, validateAction(p.Child("breakGlassAction"), rc.BreakGlassAction)...)
		errs = append(errs, validateAction(p.Child("deployToolAction"), rc.DeployToolAction)...)
	}
	sas := field.NewPath("exemptions", "serviceAccounts")
	for i, sa := range c.Exemptions.ServiceAccounts {
		ns, name, ok := strings.Cut(sa, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			errs = append(errs, field.Invalid(sas.Index(i), sa, `must be "namespace/name" or "namespace/*"`))
		}
	}
	errs = append(errs, validateFieldManagers(field.NewPath("exemptions", "fieldManagers"), c.Exemptions.FieldManagers)...)
	errs = append(errs, validateFieldManagers(field.NewPath("deployTools"), c.DeployTools)...)
	return append(errs, validateOwnership(c.Ownership)...)
}

// validateFieldManagers checks names the API server accepts as field
// managers: not empty, at most 128 printable characters.
func validateFieldManagers(p *field.Path, names []string) field.ErrorList {
	var errs field.ErrorList
	for i, fm := range names {
		if fm == "" {
			errs = append(errs, field.Required(p.Index(i), "a field manager name"))
			continue
		}
		errs = append(errs, metav1validation.ValidateFieldManager(fm, p.Index(i))...)
	}
	return errs
}

func validateAction(p *field.Path, a Action) field.ErrorList {
	if a == "" || slices.Contains(configActions(), string(a)) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, a, configActions())}
}

// document returns c as the JSON value Rego reads.
func (c Config) document() (map[string]any, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding config: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decoding config: %w", err)
	}
	return doc, nil
}
