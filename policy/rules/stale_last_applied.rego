# stale-last-applied: a rollout undo restored an older pod template but left
# last-applied describing the newer manifest, so the next apply computes its
# deletions against the wrong original.
#
# A write that only looks like an undo (analysis.rollback.confirmed false:
# its template matches no revision exactly, because another mutating webhook
# changed it, the revision predates a default the server now adds, or an
# older kubectl dropped the template fields it does not know) is
# never denied nor repaired: the rule warns that last-applied may be stale,
# when there is one (a template-only write without field manager to an
# object without a usable last-applied has none that could be).
package applyhygiene.rules.stale_last_applied

import data.applyhygiene.lib

rollback := input.analysis.rollback

# unconfirmed is true for a write that looks like an undo but restored no
# revision exactly. Inputs without rollback.confirmed are confirmed undos.
unconfirmed if rollback.confirmed == false

# stale_action is the action on a confirmed undo that left last-applied
# stale; undefined for any other write, or when the rule is off.
stale_action := effective(lib.action("stale-last-applied")) if {
	input.classification == "rollout-undo"
	not unconfirmed
	rollback.staleLastApplied == true
}

decisions contains d if {
	a := stale_action
	d := object.union(
		{"rule": "stale-last-applied", "action": a, "message": message(a), "paths": decided_paths(a), "fix": lib.view_last_applied},
		remedy(a),
	)
}

# remedy(a) writes the repaired last-applied (analysis.rollback's
# repairedLastApplied, which merge rebuilt or took from the revision) in
# the same request, when the action writes.
remedy(a) := {"patch": array.concat(
	[{"op": "add", "path": lib.last_applied_pointer, "value": rollback.repairedLastApplied}],
	[record_op | record_written],
)} if {
	lib.writes(a)
	object.get(rollback, "repairedLastApplied", "") != ""
} else := {}

decisions contains d if {
	input.classification == "rollout-undo"
	unconfirmed
	input.analysis.lastApplied.status == "present"
	a := at_most_warn(lib.action("stale-last-applied"))
	d := {"rule": "stale-last-applied", "action": a, "message": unconfirmed_message, "paths": paths, "fix": lib.explain}
}

# A Deployment's undo that dropped the hand-over's record
# (analysis.rollback.droppedRecord): kubectl's rollout undo sets the
# annotations to the restored ReplicaSet's, keeping last-applied but not
# the record of the fields that kubectl hygiene handover took out of it,
# which would then be reported as orphans (and pruned where
# orphaned-field prunes). A repair writes the record back as it was, in
# the repair of last-applied when there is one (its message says so), else
# on its own; the other actions warn with the command that puts it back.
# Never a denial, and nothing when the undo is denied: nothing is lost.
dropped_record := rollback.droppedRecord

# record_written is true when a repair writes the record back: a repair
# of a confirmed undo whose annotations, the record written back, fit.
record_written if {
	count(dropped_record.paths) > 0
	dropped_record.fits == true
	not unconfirmed
	lib.action("stale-last-applied") == "repair"
}

# record_op writes the record back, as it was, in the same request: its
# value does not change, so no manager that owns last-applied takes it.
record_op := {"op": "add", "path": lib.handed_over_pointer, "value": dropped_record.value}

# stale_decided is true when the rule's decision on last-applied itself
# denies the undo or writes the record back with its repair.
stale_decided if stale_action == "deny"

stale_decided if {
	stale_action == "repair"
	record_written
}

decisions contains d if {
	input.classification == "rollout-undo"
	count(dropped_record.paths) > 0
	not stale_decided
	a := record_action
	d := object.union(
		{"rule": "stale-last-applied", "action": a, "message": record_message(a), "paths": [lib.handed_over_path], "fix": record_fix(a)},
		record_remedy(a),
	)
}

# record_action is the action on a dropped record: repair when it is
# written back, dryrun in a dryrun namespace, else warn.
record_action := "repair" if {
	record_written
} else := "dryrun" if {
	lib.action("stale-last-applied") == "dryrun"
} else := "warn" if {
	lib.action("stale-last-applied")
}

record_remedy(a) := {"patch": [record_op]} if a == "repair" else := {}

# put_record_back is the command that writes the record back as it was.
put_record_back := sprintf("kubectl annotate %s%s --overwrite %s", [
	lib.kind_name,
	lib.namespace_flag,
	lib.shell_word(sprintf("%s=%s", [lib.handed_over_annotation, dropped_record.value])),
])

record_fix(a) := lib.explain if a == "repair" else := put_record_back

record_message(a) := sprintf(
	"[stale-last-applied] %s: rollout undo set the annotations to the restored revision's, dropping the record of the fields handed over from kubectl apply (%s); apply-hygiene put it back, so they are not reported as orphans. Check with: %s",
	[lib.describe, lib.list(dropped_record.paths), lib.explain],
) if {
	a == "repair"
} else := sprintf(
	"[stale-last-applied] %s: rollout undo set the annotations to the restored revision's, dropping the record of the fields handed over from kubectl apply (%s); without it they are reported as orphans, and pruned where orphaned-field prunes. Put it back with: %s",
	[lib.describe, lib.list(dropped_record.paths), put_record_back],
)

# record_clause is what the repair of last-applied says of the record it
# writes back with it, or "".
record_clause := sprintf(" It also put back the record of the %s handed over, which the undo dropped.", [fields(count(dropped_record.paths))]) if {
	record_written
} else := ""

# fields(n) is "field" or "N fields": the message that carries the repair
# of last-applied too names no path, to stay within the mutating
# webhook's budget of warnings.
fields(n) := "field" if n == 1 else := sprintf("%d fields", [n])

# repaired_paths are the paths of the repair of last-applied: the
# template's changes, and the record when it is written back with it.
repaired_paths := array.concat(paths, [lib.handed_over_path | record_written])

decided_paths(a) := repaired_paths if lib.writes(a) else := paths

# effective(a) is a, except that a repair needs a repaired annotation:
# without one the rule can only warn.
effective(a) := "warn" if {
	a == "repair"
	object.get(rollback, "repairedLastApplied", "") == ""
} else := a

# at_most_warn(a) is the action for an unconfirmed undo: dryrun stays
# dryrun, every other action (deny, repair, prune) becomes warn. An undo is
# the emergency action; apply-hygiene blocks or rewrites it only on a proven
# match.
at_most_warn(a) := a if {
	a in {"warn", "dryrun"}
} else := "warn"

paths := [c.path | some c in object.get(rollback, "changes", [])]

message(a) := sprintf(
	"[stale-last-applied] %s: rollout undo restored revision %d but last-applied still described the newer manifest; apply-hygiene rewrote last-applied to match revision %d (kubectl's rollout undo does not), so the next kubectl apply deletes what your manifest no longer has.%s Check with: %s",
	[lib.describe, rollback.revision, rollback.revision, record_clause, lib.view_last_applied],
) if {
	a == "repair"
} else := sprintf(
	"[stale-last-applied] %s: rollout undo restored revision %d but last-applied still describes the newer manifest, so the next kubectl apply will not delete what revision %d has and your manifest does not (%s). Check with: %s",
	[lib.describe, rollback.revision, rollback.revision, lib.list(paths), lib.view_last_applied],
)

unconfirmed_message := sprintf(
	"[stale-last-applied] %s: this write looks like a rollout undo, but its pod template matches none of the revisions exactly (another mutating webhook may have changed it, the revision predates a default the server now adds, an older kubectl dropped template fields it does not know, or a tool restored only the revision's pod spec), so apply-hygiene left last-applied as it was. It may still describe the newer manifest; then the next kubectl apply will not delete what the restored template has and your manifest does not. See where live differs from last-applied with: %s",
	[lib.describe, lib.explain],
)

# The audit: a stored object whose pod template is an older revision than
# the one last-applied describes.
decisions contains d if {
	lib.audited
	lib.audit_stale
	a := effective(lib.action("stale-last-applied"))
	d := object.union(
		{"rule": "stale-last-applied", "action": a, "message": audit_message, "paths": [lib.last_applied_path], "auditFix": lib.audit_fix("stale-last-applied"), "fix": lib.view_last_applied},
		audit_remedy,
	)
}

# audit_remedy replaces the stored last-applied with the repaired one,
# written as the Update manager that owns last-applied (fieldManager; the
# fixer's own when none does), so that the annotation stays its and
# kubectl apply --server-side, which upgrades the Update managers owning
# last-applied, still finds every client-side field. With more than one
# such owner there is no patch but the reason (noFix): a repair written as
# one would take last-applied from the others. The audit decides whether
# to write it (its scope) and guards it with a test of the annotation it
# read.
audit_remedy := {"noFix": shared_last_applied} if {
	object.get(rollback, "repairedLastApplied", "") != ""
	count(updaters) > 1
} else := {
	"patch": [{"op": "replace", "path": lib.last_applied_pointer, "value": rollback.repairedLastApplied}],
	"fieldManager": repairer,
	"summary": repair_summary,
} if {
	object.get(rollback, "repairedLastApplied", "") != ""
} else := {}

# updaters are the managers whose Update entries own last-applied, sorted.
updaters := object.get(rollback, "lastAppliedUpdaters", [])

# repairer is the only Update owner of last-applied, or "" for none.
repairer := updaters[0] if count(updaters) == 1 else := ""

shared_last_applied := sprintf(
	"last-applied is owned by %s: a repair written as one of them would take it from the others, and kubectl apply --server-side would then not upgrade their fields",
	[concat(" and ", updaters)],
)

# repair_summary names where the repaired last-applied comes from. Either
# way the repair changes only the pod template's fields (and a
# Deployment's annotations) that the undo restored and that it proves a
# manifest's.
repair_summary := sprintf("last-applied's pod template set to the one that %s %s (revision %d) kept", [rollback.revisionKind, rollback.revisionName, rollback.revision]) if {
	rollback.repairSource == "controllerRevision"
} else := sprintf("last-applied rebuilt for the pod template of %s %s (revision %d)", [rollback.revisionKind, rollback.revisionName, rollback.revision])

audit_message := sprintf(
	"[stale-last-applied] %s: the pod template is revision %d (%s %s, restored by a rollout undo) but last-applied still describes a newer manifest, so the next kubectl apply will not delete what revision %d has and your manifest does not (%s). Apply the manifest you mean to run, or check with: %s",
	[lib.describe, rollback.revision, rollback.revisionKind, rollback.revisionName, rollback.revision, lib.list(paths), lib.view_last_applied],
)
