# missing-last-applied: a client-side apply to an object that has no
# last-applied annotation (made by kubectl create or replace), so the apply
# cannot delete anything.
package applyhygiene.rules.missing_last_applied

import data.applyhygiene.lib

decisions contains lib.fixed(lib.decision("missing-last-applied", message, [lib.last_applied_path]), lib.explain) if {
	input.classification == "client-side-apply"
	input.analysis.lastApplied.status == "missing"
}

message := sprintf(
	"[missing-last-applied] %s: the object has no kubectl.kubernetes.io/last-applied-configuration annotation (objects made by kubectl create or replace without --save-config have none), so this apply cannot delete fields that your manifest does not have; from now on apply records it. See the live fields your manifest does not have with: %s",
	[lib.describe, lib.explain],
)

# The audit: a stored object without last-applied that a person made
# with kubectl (merge's KubectlMade). Not another tool's object that a
# person only touched with kubectl (a Helm release's Deployment after
# kubectl rollout restart), nor one that a server-side applier manages
# (Flux drops last-applied before its first apply): recording a manifest
# in those would be wrong advice.
decisions contains lib.fixed(lib.decision("missing-last-applied", audit_message, [lib.last_applied_path]), set_last_applied) if {
	lib.audited
	input.analysis.lastApplied.status == "missing"
	input.analysis.lastApplied.kubectlMade == true
}

audit_message := sprintf(
	"[missing-last-applied] %s: the object has no kubectl.kubernetes.io/last-applied-configuration annotation (objects made by kubectl create or replace without --save-config have none), so kubectl apply cannot delete fields that your manifest does not have. Record your manifest first with: %s",
	[lib.describe, set_last_applied],
)

set_last_applied := "kubectl apply set-last-applied -f <manifest> --create-annotation"
