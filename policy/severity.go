package policy

// The severities of findings, three of the five levels of the policy
// report formats (OpenReports and wgpolicyk8s.io: critical, high, medium,
// low, info; the oldest wgpolicyk8s.io CRDs accept only these three).
const (
	SeverityHigh   = "high"
	SeverityMedium = "medium"
	SeverityLow    = "low"
)

// severities grades the bundled rules by what the next kubectl apply does
// when nobody acts:
//
//   - high: the next apply silently does something other than the manifest
//     says to the running workload. A stale last-applied
//     (stale-last-applied) makes it compute deletions against the wrong
//     manifest; an unusable one (invalid-last-applied) makes it fail or
//     compute wrong deletions and hides every other check; dropping replicas
//     (replicas-reset) collapses a scaled workload to one replica.
//   - medium: a change someone made on purpose is lost or kept wrongly,
//     but the object stays what a manifest said at some point. The next
//     apply reverts an edit (imperative-edit, apply-reverts-drift,
//     server-side-owned) or the autoscaler's count (replicas-autoscaled), a
//     server default is left stale beside the field it depends on
//     (defaulted-dependent), or applies start failing once the annotation
//     passes the size limit (last-applied-too-large).
//   - low: nothing changes by itself; apply merely cannot clean up. An
//     orphaned field stays until someone removes it (orphaned-field), and
//     an object without last-applied cannot have fields deleted by apply
//     (missing-last-applied).
var severities = map[RuleID]string{
	RuleStaleLastApplied:    SeverityHigh,
	RuleInvalidLastApplied:  SeverityHigh,
	RuleReplicasReset:       SeverityHigh,
	RuleImperativeEdit:      SeverityMedium,
	RuleApplyRevertsDrift:   SeverityMedium,
	RuleDefaultedDependent:  SeverityMedium,
	RuleLastAppliedTooLarge: SeverityMedium,
	RuleServerSideOwned:     SeverityMedium,
	RuleReplicasAutoscaled:  SeverityMedium,
	RuleOrphanedField:       SeverityLow,
	RuleMissingLastApplied:  SeverityLow,
}

// Severity returns how much a finding of rule matters: the table above
// for the bundled rules, SeverityMedium for a user policy's rule, which
// apply-hygiene cannot grade. It grades the rule, not the action a
// configuration chose: the action says what apply-hygiene does, the
// severity how bad it is to leave the finding as it is.
func Severity(rule RuleID) string {
	if s, ok := severities[rule]; ok {
		return s
	}
	return SeverityMedium
}
