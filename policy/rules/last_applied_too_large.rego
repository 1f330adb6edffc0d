# last-applied-too-large: after an apply (or a repair of last-applied) the
# annotations exceed 80% of the API server's 262144-byte limit.
package applyhygiene.rules.last_applied_too_large

import data.applyhygiene.lib

# classifications are the writes that rewrite last-applied.
classifications := {"client-side-apply", "save-config", "rollout-undo"}

decisions contains lib.decision("last-applied-too-large", message, [lib.last_applied_path]) if {
	input.classification in classifications
	not save_config_of_another_annotation
	input.analysis.lastAppliedTooLarge == true
}

# save_config_of_another_annotation: a save-config that leaves last-applied
# as it was (kubectl hygiene handover's record of the fields it hands
# over, written right before last-applied's own patch, which is judged).
save_config_of_another_annotation if {
	input.classification == "save-config"
	not input.analysis.lastApplied.replaced
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
