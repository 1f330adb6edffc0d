package policy

import (
	"cmp"
	"fmt"
	"slices"
)

// Action is what apply-hygiene does about a finding.
type Action string

const (
	// ActionDeny rejects the request with the decision's message.
	ActionDeny Action = "deny"
	// ActionWarn allows the request and returns the message as a warning,
	// which kubectl prints as "Warning: <message>".
	ActionWarn Action = "warn"
	// ActionDryRun allows the request silently; the finding is only
	// recorded (metrics, audit), as in a namespace labelled dryrun.
	ActionDryRun Action = "dryrun"
	// ActionRepair allows the request, patches it to repair the object
	// (for example a corrected last-applied) and warns.
	ActionRepair Action = "repair"
	// ActionPrune allows the request and removes the orphaned fields it
	// names in the same request, with a warning.
	ActionPrune Action = "prune"
	// ActionOff is only valid in configuration: the rule makes no decision.
	ActionOff Action = "off"
)

// Valid reports whether a is an action a Decision may carry.
func (a Action) Valid() bool { return slices.Contains(decisionActions(), string(a)) }

// decisionActions returns the actions a Decision may carry.
func decisionActions() []string {
	return []string{string(ActionDeny), string(ActionWarn), string(ActionDryRun), string(ActionRepair), string(ActionPrune)}
}

// configActions returns the actions configuration may name.
func configActions() []string { return append(decisionActions(), string(ActionOff)) }

// Decision is what one rule decided about one request.
type Decision struct {
	// Rule is the rule's stable ID: a RuleID constant for the bundled
	// rules (RuleImperativeEdit, …), any ID for a user policy's rule.
	Rule RuleID `json:"rule"`
	// Action is what to do.
	Action Action `json:"action"`
	// Message is the one-line text for the user; it starts with
	// "[<rule>]".
	Message string `json:"message"`
	// Paths are the fields concerned, in kubectl's notation. Never nil.
	Paths []string `json:"paths"`
	// Command is the kubectl command that fixes the finding, the one the
	// message shows after "with: "; "" when the message shows none (the
	// fix is apply-hygiene's own repair or prune, or advice). A rule sets
	// it as "fix"; drivers read it here, never from the message.
	Command string `json:"fix,omitempty"`
	// Patch is the decision's remedy as data, the JSON patch that
	// carries out a repair or a prune on the object (ApplyRemedy); the
	// rule sets it as "patch" from merge's facts. Nil when the rule sets
	// none: a repair or prune without one cannot be carried out. The
	// audit's decisions carry the patch its fix writes whatever their
	// action; the audit decides whether to write it.
	Patch Patch `json:"patch,omitempty"`
	// AuditFix is true when the rule's configuration lets the audit fix
	// write the finding although its action is warn (RuleConfig.AuditFix);
	// only the audit's decisions carry it.
	AuditFix bool `json:"auditFix,omitempty"`
	// FieldManager is the field manager that the audit's fix writes the
	// patch as; "" for the fixer's own. The stale-last-applied rule names
	// the Update manager that owns last-applied, so that the repaired
	// annotation stays its. The rule sets it as "fieldManager".
	FieldManager string `json:"fieldManager,omitempty"`
	// NoFix says why the audit may not write the finding's fix although
	// the rule knows one (a repair that would take last-applied from one
	// of its owners, an orphan that kubectl rollout undo restored); such
	// a decision carries no patch. The audit shows it as the finding's
	// NoFix. The rule sets it as "noFix".
	NoFix string `json:"noFix,omitempty"`
	// Summary says what the audit's fix does, naming fields and
	// revisions, never a value: "removed <path> (rolls the pods)",
	// "last-applied rebuilt for the pod template of …". The rule sets it
	// as "summary".
	Summary string `json:"summary,omitempty"`
	// Quiet, for a repair, has the mutating pass carry out its patch
	// without a warning or an event: apply-hygiene's own bookkeeping on
	// the object (the record of a hand-over), which changes nothing the
	// writer wrote, on a write that cannot always be told from another
	// (an apply that drops a field the server puts back), where a wrong
	// guess costs at most a miss and a warning would be a false one. It
	// is still logged, counted in the metrics and kept in the request's
	// audit annotations. The rule sets it as "quiet".
	Quiet bool `json:"quiet,omitempty"`
	// Bundled is true when a bundled rule's package
	// (applyhygiene.rules.<rule> of policy/rules) decided it: the engine
	// knows it from where the decision came, never from what a policy
	// sets, and the loader refuses user modules in those packages or in
	// applyhygiene.lib. Only the audit's decisions carry it; the audit
	// writes only a bundled decision's patch. Not part of a decision's
	// JSON.
	Bundled bool `json:"-"`
}

// decodeDecisions converts the value of data.applyhygiene.decisions into
// sorted decisions. Decisions whose action is "off" are dropped.
func decodeDecisions(v any) ([]Decision, error) {
	out, err := appendDecisions(nil, v, false)
	if err != nil {
		return nil, err
	}
	SortDecisions(out)
	return out, nil
}

// appendDecisions appends to out the decisions of the set v, each with
// Bundled set to bundled, and returns it; never nil. Decisions whose
// action is "off" are dropped.
func appendDecisions(out []Decision, v any, bundled bool) ([]Decision, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("decisions is a %T, not a set", v)
	}
	if out == nil {
		out = make([]Decision, 0, len(items))
	}
	for _, item := range items {
		d, err := decodeDecision(item)
		if err != nil {
			return nil, err
		}
		d.Bundled = bundled
		if d.Action != ActionOff {
			out = append(out, d)
		}
	}
	return out, nil
}

func decodeDecision(item any) (Decision, error) {
	m, ok := item.(map[string]any)
	if !ok {
		return Decision{}, fmt.Errorf("decision %v is not an object", item)
	}
	rule, _ := m["rule"].(string)
	if rule == "" {
		return Decision{}, fmt.Errorf("decision %v has no rule", item)
	}
	action, _ := m["action"].(string)
	if a := Action(action); !a.Valid() && a != ActionOff {
		return Decision{}, fmt.Errorf("decision of rule %q has unknown action %q", rule, action)
	}
	message, ok := m["message"].(string)
	if !ok {
		return Decision{}, fmt.Errorf("decision of rule %q has no message", rule)
	}
	paths, err := decodePaths(m["paths"])
	if err != nil {
		return Decision{}, fmt.Errorf("decision of rule %q: %w", rule, err)
	}
	rawPatch, hasPatch := m["patch"]
	patch, err := decodePatch(rawPatch, hasPatch)
	if err != nil {
		return Decision{}, fmt.Errorf("decision of rule %q: %w", rule, err)
	}
	auditFix, _ := m["auditFix"].(bool)
	command, _ := m["fix"].(string)
	manager, _ := m["fieldManager"].(string)
	noFix, _ := m["noFix"].(string)
	summary, _ := m["summary"].(string)
	quiet, _ := m["quiet"].(bool)
	return Decision{Rule: RuleID(rule), Action: Action(action), Message: message, Paths: paths, Command: command, Patch: patch,
		AuditFix: auditFix, FieldManager: manager, NoFix: noFix, Summary: summary, Quiet: quiet}, nil
}

func decodePaths(v any) ([]string, error) {
	paths := []string{}
	if v == nil {
		return paths, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("paths is a %T, not an array", v)
	}
	for _, item := range items {
		p, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("path %v is not a string", item)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// Spoken returns the decisions that a driver shows the user, in order:
// all but the quiet ones (Decision.Quiet).
func Spoken(ds []Decision) []Decision {
	out := make([]Decision, 0, len(ds))
	for _, d := range ds {
		if !d.Quiet {
			out = append(out, d)
		}
	}
	return out
}

// SortDecisions sorts decisions by rule, then message, then action.
func SortDecisions(ds []Decision) {
	slices.SortFunc(ds, func(a, b Decision) int {
		return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message), cmp.Compare(a.Action, b.Action))
	})
}
