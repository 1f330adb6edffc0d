# no-edit-in-prod: no kubectl edit in namespaces labelled env=prod, whatever
# the edit changes. Changes there go through the manifest and kubectl apply.
#
# The rule uses lib.decision_or, so it honours the same configuration as
# the bundled rules: policy.rules.no-edit-in-prod.{action,
# serviceAccountAction, breakGlassAction} in the Helm values, exemptions,
# and the namespace enforcement label.
package applyhygiene.rules.no_edit_in_prod

import data.applyhygiene.lib

decisions contains lib.decision_or("no-edit-in-prod", "deny", message, []) if {
	input.request.fieldManager == "kubectl-edit"
	input.namespace.labels.env == "prod"
}

message := sprintf(
	"[no-edit-in-prod] %s: kubectl edit is not allowed in namespace %s (labelled env=prod); change the manifest and run kubectl apply",
	[lib.describe, input.namespace.name],
)
