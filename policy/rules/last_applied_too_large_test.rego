package applyhygiene.rules.last_applied_too_large_test

import data.applyhygiene.rules.last_applied_too_large
import data.applyhygiene.testing as t

large := {"lastAppliedTooLarge": true, "annotationsBytes": 230000, "lastApplied": {"status": "present", "bytes": 229000}}

test_large_annotation_is_warned if {
	ds := last_applied_too_large.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", large)
	t.actions(ds) == {["last-applied-too-large", "warn"]}
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, "the annotations take 230000 bytes (last-applied alone 229000), more than 80% of the 262144-byte limit")
	endswith(d.message, "kubectl apply --server-side -f <manifest>")
}

test_small_annotation_no_decision if {
	ds := last_applied_too_large.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {})
	count(ds) == 0
}

test_controller_is_not_checked if {
	ds := last_applied_too_large.decisions with input as t.make_input("controller", "deployment-controller", large)
	count(ds) == 0
}

# kubectl hygiene handover writes its record of the hand-over first: a
# save-config that leaves last-applied as it was draws no second warning;
# last-applied's own patch, which replaces it, does.
test_save_config_warned_once_of_a_hand_over if {
	record := last_applied_too_large.decisions with input as t.make_input("save-config", "kubectl-hygiene-handover", large)
	count(record) == 0
	replaced := json.patch(large, [{"op": "add", "path": "/lastApplied/replaced", "value": true}])
	ds := last_applied_too_large.decisions with input as t.make_input("save-config", "kubectl-client-side-apply", replaced)
	t.actions(ds) == {["last-applied-too-large", "warn"]}
}
