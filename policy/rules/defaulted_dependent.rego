# defaulted-dependent: the manifest changes a field whose server-defaulted
# sibling becomes invalid or stale (updateStrategy.type: OnDelete with a
# defaulted rollingUpdate); apply keeps the sibling because it never set it.
package applyhygiene.rules.defaulted_dependent

import data.applyhygiene.lib

classifications := {"client-side-apply", "server-side-apply"}

decisions contains d if {
	input.classification in classifications
	a := lib.action("defaulted-dependent")
	some f in input.analysis.defaultedDependents
	d := object.union({"rule": "defaulted-dependent", "action": a, "message": message(f, a), "paths": [f.path]}, remedy(f, a))
}

# remedy(f, a) removes the stale sibling in the same request when the
# action writes (repair).
remedy(f, a) := {"patch": lib.remove(f)} if lib.writes(a) else := {}

cause(f) := sprintf("the manifest changes %s", [f.dependsOn]) if {
	f.dependsOn != ""
} else := "the manifest changes the field it depends on"

effect(f) := "the API server rejects the object while it stays" if {
	f.rejected == true
} else := "it no longer applies"

fix(f, a) := "apply-hygiene removes it in this request." if {
	a == "repair"
} else := sprintf("Clear it by setting %s to null in your manifest and applying again.", [f.path])

message(f, a) := sprintf(
	"[defaulted-dependent] %s: %s, but the server-defaulted %s (%s) stays behind and %s. %s",
	[lib.describe, cause(f), f.path, lib.show(f, "live"), effect(f), fix(f, a)],
)
