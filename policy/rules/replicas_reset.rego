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
	d := {"rule": "replicas-reset", "action": a, "message": message(r, a), "paths": [r.path], "fix": fix(a, r)}
}

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
)

# fix(a, r) is the command of the hand-over; none when apply-hygiene makes it.
fix(a, r) := "" if a == "repair" else := lib.handover([r.path])
