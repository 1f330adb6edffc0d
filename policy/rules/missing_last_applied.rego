# missing-last-applied: a client-side apply to an object that has no
# last-applied annotation (made by kubectl create or replace), so the apply
# cannot delete anything.
package applyhygiene.rules.missing_last_applied

import data.applyhygiene.lib

decisions contains lib.decision("missing-last-applied", message, [lib.last_applied_path]) if {
	input.classification == "client-side-apply"
	input.analysis.lastApplied.status == "missing"
}

message := sprintf(
	"[missing-last-applied] %s: the object has no kubectl.kubernetes.io/last-applied-configuration annotation (objects made by kubectl create or replace without --save-config have none), so this apply cannot delete fields that your manifest does not have; from now on apply records it. See the live fields your manifest does not have with: kubectl hygiene explain %s",
	[lib.describe, lib.target],
)

# The audit: a stored object without last-applied.
decisions contains lib.decision("missing-last-applied", audit_message, [lib.last_applied_path]) if {
	lib.audited
	input.analysis.lastApplied.status == "missing"
}

audit_message := sprintf(
	"[missing-last-applied] %s: the object has no kubectl.kubernetes.io/last-applied-configuration annotation (objects made by kubectl create or replace without --save-config have none), so kubectl apply cannot delete fields that your manifest does not have. Record your manifest first with: kubectl apply set-last-applied -f <manifest> --create-annotation",
	[lib.describe],
)
