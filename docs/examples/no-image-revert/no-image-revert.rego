# no-image-revert: no client-side apply that puts back a container image
# which someone set with kubectl set image since the last apply (a hotfix),
# until the manifest has caught up. The bundled apply-reverts-drift rule
# only warns about it; here it is denied.
#
# The rule uses lib.decision_or, so it honours the same configuration as
# the bundled rules: policy.rules.no-image-revert.{action,
# serviceAccountAction, breakGlassAction}, exemptions, and the namespace
# enforcement label.
package applyhygiene.rules.no_image_revert

import data.applyhygiene.lib

decisions contains lib.decision_or("no-image-revert", "deny", message(f), [f.path]) if {
	input.classification == "client-side-apply"
	some f in lib.analysis.reverts
	endswith(f.path, "].image")
	f.owners[0].manager == "kubectl-set"
}

message(f) := sprintf(
	"[no-image-revert] %s: this apply sets %s back to %s, undoing %s that kubectl set image set since the last apply. Put the image you want in your manifest, then apply.",
	[lib.describe, f.path, lib.show(f, "result"), lib.show(f, "live")],
)
