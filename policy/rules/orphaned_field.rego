# orphaned-field: after an apply, live keeps a field that is in neither the
# manifest nor last-applied and that a person set (kubectl edit, patch,
# set, rollout restart, or an undo); apply will never remove it.
package applyhygiene.rules.orphaned_field

import data.applyhygiene.lib

classifications := {"client-side-apply", "server-side-apply"}

decisions contains d if {
	input.classification in classifications
	a := lib.action("orphaned-field")
	some o in input.analysis.orphans
	d := object.union({"rule": "orphaned-field", "action": a, "message": message(o, a), "paths": [o.path], "fix": fix_command(o, a)}, remedy(o, a))
}

# A hand-over through last-applied alone (kubectl apply edit-last-applied
# or set-last-applied, as kubectl's documentation prescribes): the fields
# that leave last-applied and stay set (merge's analysis.handOver) are
# recorded as kubectl hygiene handover records them, in the mutating pass,
# so that once a person sets one it is never reported as an orphan (nor
# pruned, nor removed by the audit's fix). Whenever the rule acts on the
# write (not in dryrun), and only while the annotations fit. Quietly: a
# kubectl apply whose manifest drops a field the server puts back is the
# same write (docs/rules.md), and a warning there would be a false one;
# the message is for the log and the audit annotations.
decisions contains d if {
	input.classification == "save-config"
	a := lib.action("orphaned-field")
	a != "dryrun"
	h := input.analysis.handOver
	count(h.paths) > 0
	h.fits == true
	d := {
		"rule": "orphaned-field", "action": "repair", "message": handover_message(h), "paths": [lib.handed_over_path], "fix": lib.explain,
		"patch": [{"op": "add", "path": lib.handed_over_pointer, "value": h.value}], "quiet": true,
	}
}

# An apply that dropped the record of hand-overs (merge's
# analysis.droppedRecord, which merge reports for applies only; a
# kubectl apply that changed nothing else is a save-config): a client-side
# apply whose last-applied held a copy of it (kubectl's --save-config copies the annotations there) and
# whose manifest does not, a server-side apply whose applier came to own
# the annotations it sat among. The record is apply-hygiene's, never a
# manifest's: the mutating pass writes it back as it was, quietly, as it
# records a hand-over, so that the fields handed over are not reported as
# orphans again (nor pruned, nor removed by the audit's fix). Whenever the
# rule acts on the write (not in dryrun), and only while the annotations
# fit. Removing the record on purpose is kubectl annotate's job.
decisions contains d if {
	input.classification in {"client-side-apply", "server-side-apply", "save-config"}
	a := lib.action("orphaned-field")
	a != "dryrun"
	r := input.analysis.droppedRecord
	count(r.paths) > 0
	r.fits == true
	d := {
		"rule": "orphaned-field", "action": "repair", "message": dropped_record_message(r), "paths": [lib.handed_over_path], "fix": lib.explain,
		"patch": [record_back(r)], "quiet": true,
	}
}

# record_back writes the dropped record r back: into the annotations, or
# as the whole map when the apply left none.
record_back(r) := {"op": "add", "path": "/metadata/annotations", "value": {lib.handed_over_annotation: r.value}} if {
	r.noAnnotations == true
} else := {"op": "add", "path": lib.handed_over_pointer, "value": r.value}

dropped_record_message(r) := sprintf(
	"[orphaned-field] %s: this apply dropped the annotation %s, apply-hygiene's record of %s handed over from kubectl apply; apply-hygiene %s it back, so that a person's writes of %s are not reported as orphans. Check with: %s",
	[lib.describe, lib.handed_over_annotation, handed_over_fields(r.paths), put_back, them(r.paths), lib.explain],
)

# put_back says what the mutating pass did: a dry run stores nothing.
put_back := "would put (this is a dry run: nothing is stored)" if input.request.dryRun == true else := "put"

handover_message(h) := sprintf(
	"[orphaned-field] %s: this write took %s out of last-applied, which hands %s over from kubectl apply to its next writer; apply-hygiene %s the hand-over in the annotation %s, so that a person's later writes of %s are not reported as orphans. Check with: %s",
	[lib.describe, handed_over_fields(h.paths), them(h.paths), recorded, lib.handed_over_annotation, them(h.paths), lib.explain],
)

# recorded says what the mutating pass did: a dry run stores nothing.
recorded := "would record (this is a dry run: nothing is stored)" if input.request.dryRun == true else := "recorded"

# handed_over_fields names up to three fields, and counts more, or
# fewer whose names are long (the mutating pass's warnings share 768
# characters).
handed_over_fields(paths) := concat(", ", paths) if {
	count(paths) <= 3
	count(concat(", ", paths)) <= 200
} else := sprintf("%d fields", [count(paths)])

them(paths) := "it" if count(paths) == 1 else := "them"

# remedy(o, a) removes the orphan in the same request when the action
# writes (prune).
remedy(o, a) := {"patch": lib.remove(o)} if lib.writes(a) else := {}

setter(o) := lib.owner_text(o.owners[0]) if {
	o.owners[0]
} else := "an unknown writer"

# fix(o, a) tells how the orphan goes away: with the object only, where
# the API server refuses its removal (merge's frozen); pruned by
# apply-hygiene; or the command that removes it (guarded by a test of its
# value). Inside a pod template it first says that the removal rolls the
# pods.
fix(o, a) := "The API server refuses its removal while the object exists: it goes only when the object is created again from your manifest." if {
	o.frozen
} else := sentences(["apply-hygiene removes it in this request.", rolls(o, "This apply therefore")]) if {
	pruned(o, a)
} else := sentences([rolls(o, "Removing it"), sprintf("Remove it with: %s", [command(o)])])

# pruned(o, a) is true when the action prunes and the remedy removes
# something: merge gives no pointer to a field whose removal would not
# stick (a serviceAccountName whose deprecated alias names another
# service account), and the message claims no removal for it.
pruned(o, a) if {
	a == "prune"
	lib.remove(o) != []
}

# fix_command(o, a) is the command that removes o; none when
# apply-hygiene prunes it or no command can remove it (frozen).
fix_command(o, a) := "" if {
	o.frozen
} else := "" if {
	pruned(o, a)
} else := command(o)

# sentences(texts) joins the non-empty texts with spaces.
sentences(texts) := concat(" ", [t | some t in texts; t != ""])

# rolls(o, subject) is the sentence on what removing o does to the pods
# (lib.template_change), or "" outside a pod template.
rolls(o, subject) := concat("", [lib.template_change(o.path, subject), "."]) if {
	lib.template_change(o.path, subject)
} else := ""

command(o) := sprintf("kubectl patch %s --type=json -p %s", [lib.target, lib.shell_quote(o.removePatch)]) if {
	o.removePatch != ""
} else := sprintf("kubectl edit %s", [lib.target])

message(o, a) := sprintf(
	"[orphaned-field] %s: %s (%s, set by %s) is in neither your manifest nor last-applied, so kubectl apply will never remove it. %s",
	[lib.describe, o.path, lib.show(o, "live"), setter(o), fix(o, a)],
)

# The audit: a stored object's orphan that no stale last-applied explains;
# the periodic audit may remove it where the rule's auditFix says so.
decisions contains d if {
	lib.audited_present
	a := lib.action("orphaned-field")
	some o in input.analysis.orphans
	not lib.explained(o.path)
	d := object.union(
		{"rule": "orphaned-field", "action": a, "message": audit_message(o), "paths": [o.path], "auditFix": lib.audit_fix("orphaned-field"), "fix": fix_command(o, "warn")},
		audit_remedy(o),
	)
}

# audit_remedy(o) is the orphan's guarded remove patch (removePatch: its
# test operations first), the one the message's command sends, with the
# summary of what the audit's fix does; none when merge made none (a value
# too long to test). An orphan that kubectl rollout undo restored gets no
# patch but the reason (noFix): the undo may have copied it from a
# revision, and managedFields no longer say who first wrote it, so a
# removal would write beyond what is proven (and take back part of the
# undo, rolling the pods to a template no revision had); the printed
# command is left to a person.
audit_remedy(o) := {"noFix": undo_restored} if {
	object.get(o, "removePatch", "") != ""
	o.restoredByUndo == true
} else := {"patch": json.unmarshal(o.removePatch), "summary": removed(o)} if {
	object.get(o, "removePatch", "") != ""
} else := {}

undo_restored := "kubectl rollout undo restored it from an earlier revision, which does not prove who first set it (a tool's stamp, such as Reloader's, comes back with the template): remove it yourself if nothing needs it"

# removed(o) is the summary of the removal of o, naming its field, never
# its value, and saying when it rolls the pods (lib.rolls_pods).
removed(o) := sprintf("removed %s (rolls the pods)", [o.path]) if {
	lib.rolls_pods(o.path)
} else := sprintf("removed %s", [o.path])

audit_message(o) := sprintf(
	"[orphaned-field] %s: %s (%s, set by %s) is not in last-applied, so kubectl apply will never remove it unless your manifest sets it. %s",
	[lib.describe, o.path, lib.show(o, "live"), setter(o), fix(o, "warn")],
)
