# replicas-reset: a client-side apply drops spec.replicas that last-applied
# had; apply deletes it, and the server puts its default in its place (1
# for the built-in kinds) or, for a kind without one, leaves it unset.
# With the repair action the mutating webhook performs the hand-over in
# the same request: it keeps the live count, and the new last-applied has
# no replicas, so the next apply leaves them alone too.
package applyhygiene.rules.replicas_reset

import data.applyhygiene.lib

decisions contains d if {
	input.classification == "client-side-apply"
	r := input.analysis.replicasReset
	r.live != 1
	a := lib.action("replicas-reset")
	d := object.union({"rule": "replicas-reset", "action": a, "message": message(r, a), "paths": [r.path], "fix": fix(a, r)}, remedy(a, r))
}

# remedy(a, r) performs the hand-over when the action writes: the field
# gets back its live count before the apply (analysis.replicasReset.live)
# with merge's setPatch, an add of the field at the fact's own path, or of
# its first missing ancestor (a custom resource whose manifest drops spec
# has none after the apply). No patch when merge computed none.
remedy(a, r) := {"patch": json.unmarshal(r.setPatch)} if {
	lib.writes(a)
	object.get(r, "setPatch", "") != ""
} else := {}

# outcome(r) says what the apply does to replicas: the value the object
# gets (analysis.replicasReset.result, the server's default), or that the
# field is removed when the object after the apply has none.
outcome(r) := sprintf("resets it from %s to %s", [lib.show(r, "live"), lib.show(r, "result")]) if {
	r.result != null
} else := sprintf("removes it (now %s)", [lib.show(r, "live")])

message(r, a) := sprintf(
	"[replicas-reset] %s: the manifest drops %s, which last-applied has; apply-hygiene keeps its live value %s in this request, and last-applied no longer has it, so from now on kubectl apply leaves it to kubectl scale or an autoscaler.",
	[lib.describe, r.path, lib.show(r, "live")],
) if {
	a == "repair"
} else := sprintf(
	"[replicas-reset] %s: the manifest drops %s, which last-applied has, so this apply %s. To hand replicas over to kubectl scale or an autoscaler, first delete it from last-applied with: %s, then apply the manifest without it.",
	[lib.describe, r.path, outcome(r), lib.handover([r.path])],
) if {
	a == "deny"
} else := sprintf(
	"[replicas-reset] %s: the manifest drops %s, which last-applied has, so this apply %s, and last-applied no longer has it: from now on kubectl apply leaves it to kubectl scale or an autoscaler. To keep %s, set it back with: %s",
	[lib.describe, r.path, outcome(r), lib.show(r, "live"), set_back(r)],
)

# fix(a, r) is the command a message ends with: the hand-over while the
# apply is denied (last-applied still has replicas); none when
# apply-hygiene makes the hand-over (repair); else, for an apply let
# through (warn, dryrun), which has dropped replicas from last-applied so
# that a hand-over would fail, the command that sets the count back.
fix(a, r) := "" if {
	a == "repair"
} else := lib.handover([r.path]) if {
	a == "deny"
} else := set_back(r)

# set_back(r) sets replicas back to the live count before the apply:
# kubectl scale for the built-in kinds, whose scale subresource sets
# spec.replicas; a merge patch for the others (a CRD may have no scale
# subresource, or one that sets another field).
set_back(r) := sprintf("kubectl scale %s --replicas=%s", [lib.target, lib.show(r, "live")]) if {
	[lib.obj.apiVersion, lib.obj.kind] in {["apps/v1", "Deployment"], ["apps/v1", "StatefulSet"], ["apps/v1", "ReplicaSet"], ["v1", "ReplicationController"]}
} else := sprintf("kubectl patch %s --type=merge -p %s", [lib.target, lib.shell_quote(json.marshal({"spec": {"replicas": r.live}}))])
