# last-applied-too-large: after an apply (or a repair of last-applied) the
# annotations exceed 80% of the API server's 262144-byte limit.
package applyhygiene.rules.last_applied_too_large

import data.applyhygiene.lib

# classifications are the writes that rewrite last-applied.
classifications := {"client-side-apply", "save-config", "rollout-undo"}

decisions contains lib.decision("last-applied-too-large", message, [lib.last_applied_path]) if {
	input.classification in classifications
	input.analysis.lastAppliedTooLarge == true
}

message := sprintf(
	"[last-applied-too-large] %s: after this write the annotations take %d bytes (last-applied alone %d), more than 80%% of the 262144-byte limit; once they pass it, kubectl apply fails. Switch this object to server-side apply, which keeps no last-applied: kubectl apply --server-side -f <manifest>",
	[lib.describe, input.analysis.annotationsBytes, input.analysis.lastApplied.bytes],
)

# The audit: a stored object whose annotations are near the limit.
decisions contains lib.decision("last-applied-too-large", audit_message, [lib.last_applied_path]) if {
	lib.audited
	input.analysis.lastAppliedTooLarge == true
}

audit_message := sprintf(
	"[last-applied-too-large] %s: the annotations take %d bytes (last-applied alone %d), more than 80%% of the 262144-byte limit; once they pass it, kubectl apply fails. Switch this object to server-side apply, which keeps no last-applied: kubectl apply --server-side -f <manifest>",
	[lib.describe, input.analysis.annotationsBytes, input.analysis.lastApplied.bytes],
)
