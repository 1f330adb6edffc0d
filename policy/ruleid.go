package policy

// RuleID is the stable ID of a rule (docs/rules.md). Decisions,
// messages ("[<rule>] …"), metrics labels, audit events and the CLI all
// carry it. User policies may define rules of their own, whose IDs are
// not among the constants below.
type RuleID string

// The IDs of the bundled rules (policy/rules/*.rego). TestRuleIDs keeps
// them equal to the rules the Rego defines and configures.
const (
	// RuleImperativeEdit: a non-apply write by a person changes a field
	// that last-applied owns.
	RuleImperativeEdit RuleID = "imperative-edit"
	// RuleApplyRevertsDrift: a client-side apply overwrites a value that
	// someone changed since the last apply.
	RuleApplyRevertsDrift RuleID = "apply-reverts-drift"
	// RuleOrphanedField: after an apply, live keeps a field that is in
	// neither the manifest nor last-applied.
	RuleOrphanedField RuleID = "orphaned-field"
	// RuleStaleLastApplied: a rollout undo restored a template that no
	// longer matches last-applied.
	RuleStaleLastApplied RuleID = "stale-last-applied"
	// RuleDefaultedDependent: the manifest changes a field whose
	// server-defaulted sibling becomes invalid or stale.
	RuleDefaultedDependent RuleID = "defaulted-dependent"
	// RuleReplicasReset: the manifest drops replicas that last-applied
	// had.
	RuleReplicasReset RuleID = "replicas-reset"
	// RuleMissingLastApplied: the object has no last-applied.
	RuleMissingLastApplied RuleID = "missing-last-applied"
	// RuleInvalidLastApplied: last-applied is not a JSON object, names
	// another object or has metadata that is not an object.
	RuleInvalidLastApplied RuleID = "invalid-last-applied"
	// RuleLastAppliedTooLarge: the annotations near the size limit.
	RuleLastAppliedTooLarge RuleID = "last-applied-too-large"
	// RuleServerSideOwned: a non-apply write by a person changes a field
	// that a server-side applier (an Apply entry of managedFields) owns.
	RuleServerSideOwned RuleID = "server-side-owned"
	// RuleReplicasAutoscaled: an apply's manifest sets replicas while a
	// HorizontalPodAutoscaler scales the object.
	RuleReplicasAutoscaled RuleID = "replicas-autoscaled"
)

// Rules returns the IDs of the bundled rules, in the order of
// docs/rules.md.
func Rules() []RuleID {
	return []RuleID{
		RuleImperativeEdit,
		RuleApplyRevertsDrift,
		RuleOrphanedField,
		RuleStaleLastApplied,
		RuleDefaultedDependent,
		RuleReplicasReset,
		RuleMissingLastApplied,
		RuleInvalidLastApplied,
		RuleLastAppliedTooLarge,
		RuleServerSideOwned,
		RuleReplicasAutoscaled,
	}
}
