# Package applyhygiene.testing builds inputs for the rules' tests.
package applyhygiene.testing

object_ref := {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"}

alice := {"username": "alice", "groups": ["system:authenticated"], "serviceAccount": false}

robot := {
	"username": "system:serviceaccount:ci:deployer",
	"groups": ["system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated"],
	"serviceAccount": true,
}

empty_analysis := {
	"object": object_ref,
	"operation": "apply",
	"lastApplied": {"status": "present", "bytes": 300},
	"annotationsBytes": 400,
	"lastAppliedTooLarge": false,
	"drift": [],
	"imperativeChanges": [],
	"applyOwnedChanges": [],
	"appliers": [],
	"reverts": [],
	"orphans": [],
	"defaultedDependents": [],
}

# make_input(classification, manager, analysis) is an input for a write by
# alice to Deployment default/nginx; analysis is merged over an empty one.
make_input(classification, manager, analysis) := {
	"request": {
		"uid": "0000",
		"operation": "UPDATE",
		"subresource": "",
		"dryRun": false,
		"object": object_ref,
		"resource": {"group": "apps", "resource": "deployments"},
		"user": alice,
		"fieldManager": manager,
	},
	"namespace": {"name": "default", "labels": {}},
	"classification": classification,
	"analysis": object.union(empty_analysis, analysis),
}

# actions(ds) are the [rule, action] pairs of decisions.
actions(ds) := {[d.rule, d.action] | some d in ds}

# paths(ds) are the paths of decisions.
paths(ds) := {p | some d in ds; some p in d.paths}

# all_start_with_rule(ds) is true when every message starts with its rule.
all_start_with_rule(ds) if {
	every d in ds {
		startswith(d.message, sprintf("[%s] Deployment default/nginx: ", [d.rule]))
		not contains(d.message, "\n")
	}
}
