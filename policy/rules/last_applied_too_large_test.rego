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
