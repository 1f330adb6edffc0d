package applyhygiene.rules.defaulted_dependent_test

import data.applyhygiene.rules.defaulted_dependent
import data.applyhygiene.testing as t

# A StatefulSet switched to updateStrategy OnDelete keeps the defaulted
# rollingUpdate, which the API server rejects.
rolling := {
	"path": "spec.updateStrategy.rollingUpdate",
	"live": {"partition": 0},
	"result": {"partition": 0},
	"dependsOn": "spec.updateStrategy.type",
	"rejected": true,
}

test_dependent_is_repaired if {
	ds := defaulted_dependent.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"defaultedDependents": [rolling]})
	t.actions(ds) == {["defaulted-dependent", "repair"]}
	t.paths(ds) == {"spec.updateStrategy.rollingUpdate"}
	t.all_start_with_rule(ds)
	some d in ds
	contains(d.message, `the manifest changes spec.updateStrategy.type, but the server-defaulted spec.updateStrategy.rollingUpdate ({"partition":0}) stays behind and the API server rejects the object while it stays. apply-hygiene removes it in this request.`)
}

test_warn_tells_how_to_clear if {
	ds := defaulted_dependent.decisions with input as t.make_input("server-side-apply", "kubectl", {"defaultedDependents": [object.remove(rolling, ["rejected", "dependsOn"])]})
		with data.applyhygiene.config as {"rules": {"defaulted-dependent": {"action": "warn"}}}
	t.actions(ds) == {["defaulted-dependent", "warn"]}
	some d in ds
	contains(d.message, "the manifest changes the field it depends on")
	contains(d.message, "it no longer applies")
	endswith(d.message, "Clear it by setting spec.updateStrategy.rollingUpdate to null in your manifest and applying again.")
}

test_edit_is_not_checked if {
	ds := defaulted_dependent.decisions with input as t.make_input("imperative", "kubectl-edit", {"defaultedDependents": [rolling]})
	count(ds) == 0
}

# The repair's remedy removes the sibling at its pointer; a warning
# carries none.
test_repair_removes_the_sibling if {
	ds := defaulted_dependent.decisions with input as t.make_input("client-side-apply", "kubectl-client-side-apply", {"defaultedDependents": [object.union(rolling, {"pointer": "/spec/updateStrategy/rollingUpdate"})]})
	some d in ds
	d.patch == [{"op": "remove", "path": "/spec/updateStrategy/rollingUpdate"}]
}

test_warning_carries_no_patch if {
	ds := defaulted_dependent.decisions with input as t.make_input("server-side-apply", "kubectl", {"defaultedDependents": [object.union(rolling, {"pointer": "/spec/updateStrategy/rollingUpdate"})]})
		with data.applyhygiene.config as {"rules": {"defaulted-dependent": {"action": "warn"}}}
	some d in ds
	not "patch" in object.keys(d)
}
