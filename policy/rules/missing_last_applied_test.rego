package applyhygiene.rules.missing_last_applied_test

import data.applyhygiene.rules.missing_last_applied
import data.applyhygiene.testing as t

missing := {"lastApplied": {"status": "missing", "bytes": 0}}

test_apply_without_last_applied_is_warned if {
	ds := missing_last_applied.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", missing)
	t.actions(ds) == {["missing-last-applied", "warn"]}
	t.paths(ds) == {"metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"}
	t.all_start_with_rule(ds)
}

test_present_last_applied_no_decision if {
	ds := missing_last_applied.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {})
	count(ds) == 0
}

test_edit_is_not_checked if {
	ds := missing_last_applied.decisions with input as t.make_input("imperative", "kubectl-edit", missing)
	count(ds) == 0
}
