# invalid-last-applied: the last-applied annotation is not a JSON object,
# names another object (a kind, group or name it has differs: one it lacks
# does not, for kubectl never reads them), or has metadata that is not an
# object. The request is allowed; the analysis is skipped. Not on a
# save-config write, which replaces it. The message says what kubectl
# apply does with it, by analysis.lastApplied.fault.
package applyhygiene.rules.invalid_last_applied

import data.applyhygiene.lib

decisions contains lib.fixed(lib.decision("invalid-last-applied", message, [lib.last_applied_path]), set_last_applied) if {
	input.analysis.lastApplied.status == "invalid"
	# A save-config write (kubectl apply set-last-applied, which the
	# message prescribes, edit-last-applied, replace --save-config)
	# replaces the stored annotation, which is what the rule judges, with
	# the user's manifest: nothing is left to rewrite.
	input.classification != "save-config"
	judged
}

# judged is true when the write used or leaves the unusable annotation: a
# client-side apply computed its patch with it, whatever it records next;
# any other write is judged by what it leaves, and one that removed it
# (kubectl annotate …last-applied-configuration-, Flux's clean-up,
# kubectl replace of a manifest without it) or put another in its place
# (kubectl edit, a server-side apply of kubectl's) leaves it no more.
judged if input.classification == "client-side-apply"

judged if not input.analysis.lastApplied.replaced

reason := input.analysis.lastApplied.error if {
	input.analysis.lastApplied.error != ""
} else := "reason unknown"

message := sprintf(
	"[invalid-last-applied] %s: the kubectl.kubernetes.io/last-applied-configuration annotation is unusable (%s): %s. apply-hygiene skipped its checks. Rewrite it from your manifest with: %s",
	[lib.describe, reason, consequence, set_last_applied],
)

# consequence is what kubectl apply does with the annotation
# (merge.LastAppliedFault): kubectl's CreateThreeWayMergePatch cannot
# decode what is not a JSON object, never reads the annotation's kind or
# name, and deletes nothing under metadata that is not an object.
consequences := {
	"not-an-object": "kubectl apply fails on this object, for it cannot decode the annotation",
	"another-object": "kubectl apply deletes every field it sets that your manifest lacks, as if this object's previous manifest had set it",
	"metadata-not-an-object": "kubectl apply ignores its metadata, so it deletes no label or annotation that you drop from your manifest",
}

consequence := consequences[input.analysis.lastApplied.fault] if {
	input.analysis.lastApplied.fault in object.keys(consequences)
} else := "kubectl apply may fail on this object or compute wrong deletions"

set_last_applied := "kubectl apply set-last-applied -f <manifest>"
