package applyhygiene.rules.invalid_last_applied_test

import data.applyhygiene.rules.invalid_last_applied
import data.applyhygiene.testing as t

invalid := {"lastApplied": {"status": "invalid", "bytes": 12, "error": `invalid kubectl.kubernetes.io/last-applied-configuration annotation: it names "web", not "nginx"`}}

test_invalid_last_applied_is_warned_for_any_write if {
	some classification in ["client-side-apply", "imperative", "controller"]
	ds := invalid_last_applied.decisions with input as t.make_input(classification, "", invalid)
	t.actions(ds) == {["invalid-last-applied", "warn"]}
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, `(invalid kubectl.kubernetes.io/last-applied-configuration annotation: it names "web", not "nginx")`)
}

# kubectl apply set-last-applied (which the message prescribes),
# edit-last-applied and replace --save-config replace the stored
# annotation the rule judges.
test_save_config_replacing_it_no_decision if {
	ds := invalid_last_applied.decisions with input as t.make_input("save-config", "", invalid)
	count(ds) == 0
}

# A write that removes the unusable annotation or puts another in its
# place leaves nothing to rewrite; a client-side apply computed its patch
# with it all the same.
test_replaced_by_the_write_no_decision if {
	replaced := {"lastApplied": object.union(invalid.lastApplied, {"replaced": true})}
	some classification in ["imperative", "server-side-apply", "rollout-undo"]
	ds := invalid_last_applied.decisions with input as t.make_input(classification, "", replaced)
	count(ds) == 0
}

test_replaced_by_a_client_side_apply_is_warned if {
	replaced := {"lastApplied": object.union(invalid.lastApplied, {"replaced": true})}
	ds := invalid_last_applied.decisions with input as t.make_input("client-side-apply", "", replaced)
	t.actions(ds) == {["invalid-last-applied", "warn"]}
}

# The message says what kubectl apply does with the annotation, by its
# fault (merge.LastAppliedFault).
test_consequence_by_fault if {
	every fault, want in {
		"not-an-object": "kubectl apply fails on this object, for it cannot decode the annotation",
		"another-object": "kubectl apply deletes every field it sets that your manifest lacks, as if this object's previous manifest had set it",
		"metadata-not-an-object": "kubectl apply ignores its metadata, so it deletes no label or annotation that you drop from your manifest",
	} {
		contains(message_with_fault(fault), want)
		contains(message_with_fault(fault), "apply-hygiene skipped its checks")
		not contains(message_with_fault(fault), "may fail")
	}
}

message_with_fault(fault) := d.message if {
	la := {"lastApplied": object.union(invalid.lastApplied, {"fault": fault})}
	ds := invalid_last_applied.decisions with input as t.make_input("client-side-apply", "", la)
	t.actions(ds) == {["invalid-last-applied", "warn"]}
	some d in ds
}

# An input without a fault (written before it existed) claims no more than
# that kubectl apply may fail or compute wrong deletions.
test_consequence_without_fault if {
	ds := invalid_last_applied.decisions with input as t.make_input("client-side-apply", "", invalid)
	some d in ds
	contains(d.message, "kubectl apply may fail on this object or compute wrong deletions")
}

test_reason_unknown if {
	ds := invalid_last_applied.decisions with input as t.make_input("imperative", "", {"lastApplied": {"status": "invalid", "bytes": 3}})
	some d in ds
	contains(d.message, "(reason unknown)")
}

test_valid_last_applied_no_decision if {
	ds := invalid_last_applied.decisions with input as t.make_input("client-side-apply", "", {})
	count(ds) == 0
}

test_no_analysis_no_decision if {
	ds := invalid_last_applied.decisions with input as object.remove(t.make_input("client-side-apply", "", {}), ["analysis"])
	count(ds) == 0
}
