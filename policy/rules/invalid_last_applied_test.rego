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
