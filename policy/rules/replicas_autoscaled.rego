# replicas-autoscaled: an apply (client- or server-side) whose manifest
# sets spec.replicas while a HorizontalPodAutoscaler scales the object.
# Each apply sets the manifest's count again and the autoscaler scales
# away from it again: the two fight on every apply. Decided only when the
# manifest really sets replicas (input.autoscaling.manifestReplicas: the
# new last-applied, or the applied configuration) and an autoscaler
# targets the object (input.autoscaling.autoscalers, from the server's
# cache; absent when it is unknown).
package applyhygiene.rules.replicas_autoscaled

import data.applyhygiene.lib

classifications := {"client-side-apply", "server-side-apply"}

decisions contains lib.decision("replicas-autoscaled", message(h), ["spec.replicas"]) if {
	input.classification in classifications
	input.autoscaling.manifestReplicas != null
	some h in input.autoscaling.autoscalers
}

manifest_replicas := lib.show(input.autoscaling, "manifestReplicas")

# desired(h) says what the autoscaler asks for now: status.desiredReplicas,
# 0 until it has computed a count.
desired(h) := sprintf("it wants %d replicas now", [h.desiredReplicas]) if {
	h.desiredReplicas > 0
} else := "it has computed no desired count yet"

message(h) := sprintf(
	"[replicas-autoscaled] %s: the manifest sets spec.replicas to %s, but HorizontalPodAutoscaler %s scales this %s (%s, between %d and %d), so every apply fights the autoscaler: it sets the count back to %s and the autoscaler scales it again. Drop replicas from the manifest to leave them to the autoscaler; that apply is replicas-reset's hand-over (its repair action keeps the live count).",
	[lib.describe, manifest_replicas, h.name, lib.obj.kind, desired(h), h.minReplicas, h.maxReplicas, manifest_replicas],
)
