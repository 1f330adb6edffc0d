# apply-reverts-drift: a client-side apply overwrites a value that someone
# changed since the previous apply (kubectl's --overwrite=false conflict).
package applyhygiene.rules.apply_reverts_drift

import data.applyhygiene.lib

decisions contains lib.fixed(lib.decision("apply-reverts-drift", message(r), [r.path]), lib.explain) if {
	input.classification == "client-side-apply"
	some r in input.analysis.reverts
	not autoscaled(r)
}

# autoscaled(r) is true when replicas-autoscaled reports this apply's
# spec.replicas already: the count it puts back is the autoscaler's, and
# that warning says so with the autoscaler's name.
autoscaled(r) if {
	r.path == "spec.replicas"
	some d in data.applyhygiene.rules.replicas_autoscaled.decisions
}

# change(r) says what the apply does to the field.
change(r) := sprintf("sets %s back to %s", [r.path, lib.show(r, "manifest")]) if {
	r.manifest != null
} else := sprintf("removes %s", [r.path])

message(r) := sprintf(
	"[apply-reverts-drift] %s: this apply %s, discarding %s set by %s since the last apply. To keep that value, put it in your manifest before you apply; see every drifted field with: %s",
	[lib.describe, change(r), lib.show(r, "live"), lib.who(r), lib.explain],
)

# The audit: a field of a stored object that a controller changed away
# from last-applied; the next apply puts it back.
decisions contains lib.fixed(lib.decision("apply-reverts-drift", audit_message(f), [f.path]), lib.explain) if {
	some f in lib.audit_drift
	not lib.by_person(f)
}

audit_message(f) := sprintf(
	"[apply-reverts-drift] %s: the next kubectl apply sets %s back to %s, discarding %s set by %s since the last apply. To keep that value, put it in your manifest before you apply; see every drifted field with: %s",
	[lib.describe, f.path, lib.show(f, "lastApplied"), lib.show(f, "live"), lib.who(f), lib.explain],
)
