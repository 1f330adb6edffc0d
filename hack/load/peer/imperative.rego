# The peer reference of hack/load -peer (docs/performance.md): the policy
# a Gatekeeper or kube-mgmt user writes by hand to catch imperative edits
# of objects managed with kubectl apply. OPA evaluates it with the whole
# AdmissionReview as input; apply-hygiene is measured against it.
#
# It reads the old object's last-applied annotation with json.unmarshal,
# walks it, and compares each leaf's path in the old and the new object.
# It is wrong where apply-hygiene is right, as such policies are:
# - lists are compared by index, without merge keys: a container inserted
#   before another makes every field of the ones after it "changed";
# - it knows nothing of managedFields: a controller's write (an HPA's
#   replicas) to a field in last-applied is denied like a person's, and a
#   field a person added that the manifest never had is not seen at all;
# - an apply is told by its field manager alone, so a client that names
#   itself "kubectl-client-side-apply" passes, and an undo, a scale or a
#   label by kubectl is denied like an edit;
# - values are compared as JSON: "500m" and "0.5" CPU differ, a defaulted
#   or normalized value looks edited;
# - fields that the manifest dropped (what apply would prune) are ignored.
package peer

annotation := "kubectl.kubernetes.io/last-applied-configuration"

# Client-side apply, and server-side apply's default manager.
appliers := {"kubectl-client-side-apply", "kubectl"}

default applying := false

applying if input.request.options.fieldManager in appliers

applied := json.unmarshal(input.request.oldObject.metadata.annotations[annotation])

manager := object.get(input.request.options, "fieldManager", input.request.userInfo.username)

subject := sprintf("%s %s/%s", [input.request.kind.kind, input.request.namespace, input.request.name])

# leaves are the paths of last-applied's values that are not maps or lists.
leaves contains path if {
	walk(applied, [path, value])
	not is_object(value)
	not is_array(value)
}

dotted(path) := concat(".", [sprintf("%v", [p]) | some p in path])

changed contains path if {
	some path in leaves
	object.get(input.request.object, path, null) != object.get(input.request.oldObject, path, null)
}

deny contains msg if {
	input.request.operation == "UPDATE"
	not applying
	some path in changed
	msg := sprintf("%s: %s is managed by kubectl apply but %q changed it; edit the manifest and apply it", [subject, dotted(path), manager])
}

# Drift the edit did not make: the object already differed from the manifest.
warn contains msg if {
	input.request.operation == "UPDATE"
	some path in leaves
	not path in changed
	object.get(input.request.object, path, null) != object.get(applied, path, null)
	msg := sprintf("%s: %s differs from last-applied", [subject, dotted(path)])
}

warn contains msg if {
	input.request.operation == "UPDATE"
	applied
	not input.request.object.metadata.annotations[annotation]
	msg := sprintf("%s: the last-applied annotation was removed; kubectl apply can no longer prune", [subject])
}

warn contains msg if {
	input.request.operation == "CREATE"
	not applying
	not input.request.object.metadata.annotations[annotation]
	msg := sprintf("%s: created without last-applied; use kubectl apply, or kubectl create --save-config", [subject])
}

decision := {"deny": deny, "warn": warn}
