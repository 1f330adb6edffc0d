# replicas-reset: a client-side apply drops spec.replicas that last-applied
# had; apply deletes it and the server resets it to 1.
package applyhygiene.rules.replicas_reset

import data.applyhygiene.lib

decisions contains lib.decision("replicas-reset", message(r), [r.path]) if {
	input.classification == "client-side-apply"
	r := lib.analysis.replicasReset
	r.live != 1
}

message(r) := sprintf(
	"[replicas-reset] %s: the manifest drops %s, which last-applied has, so this apply resets it from %s to %s. To hand replicas over to kubectl scale or an autoscaler, first delete it from last-applied with: kubectl apply edit-last-applied %s, then apply the manifest without it.",
	[lib.describe, r.path, lib.show(r, "live"), lib.show_or(r, "result", "1"), lib.target],
)
