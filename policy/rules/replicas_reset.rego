# replicas-reset: a client-side apply drops spec.replicas that last-applied
# had; apply deletes it, and the server puts its default in its place (1
# for the built-in kinds) or, for a kind without one, leaves it unset.
package applyhygiene.rules.replicas_reset

import data.applyhygiene.lib

decisions contains lib.decision("replicas-reset", message(r), [r.path]) if {
	input.classification == "client-side-apply"
	r := input.analysis.replicasReset
	r.live != 1
}

# outcome(r) says what the apply does to replicas: the value the object
# gets (analysis.replicasReset.result, the server's default), or that the
# field is removed when the object after the apply has none.
outcome(r) := sprintf("resets it from %s to %s", [lib.show(r, "live"), lib.show(r, "result")]) if {
	r.result != null
} else := sprintf("removes it (now %s)", [lib.show(r, "live")])

message(r) := sprintf(
	"[replicas-reset] %s: the manifest drops %s, which last-applied has, so this apply %s. To hand replicas over to kubectl scale or an autoscaler, first delete it from last-applied with: kubectl apply edit-last-applied %s, then apply the manifest without it.",
	[lib.describe, r.path, outcome(r), lib.target],
)
