# Package applyhygiene.lib holds what every rule shares: the rule
# configuration (defaults merged with data.applyhygiene.config), the action
# a rule takes for this request (exemptions, break-glass groups, service
# accounts, namespace overrides), and helpers that render messages.
#
# User policies may call it too: lib.decision_or("my-rule", "deny", msg,
# paths) returns a decision that honours the same configuration, or is
# undefined when the rule is off for this request.
package applyhygiene.lib

# default_config holds the default action of every bundled rule (design.md
# section 4) and the defaults of the other settings.
default_config := {
	"rules": {
		"imperative-edit": {"action": "deny", "serviceAccountAction": "warn", "breakGlassAction": "warn", "deployToolAction": "warn"},
		"apply-reverts-drift": {"action": "warn"},
		"orphaned-field": {"action": "warn"},
		"stale-last-applied": {"action": "repair"},
		"defaulted-dependent": {"action": "repair"},
		"replicas-reset": {"action": "deny", "serviceAccountAction": "warn"},
		"missing-last-applied": {"action": "warn"},
		"invalid-last-applied": {"action": "warn"},
		"last-applied-too-large": {"action": "warn"},
		"server-side-owned": {"action": "warn"},
		"replicas-autoscaled": {"action": "warn"},
	},
	"breakGlassGroups": [],
	"deployTools": ["helm"],
	"exemptions": {"users": [], "groups": [], "serviceAccounts": [], "fieldManagers": []},
	"namespaceLabel": "apply-hygiene.io/enforcement",
}

default supplied := {}

# supplied is the configuration given to the engine (Helm values).
supplied := data.applyhygiene.config

# config is the configuration in force: supplied merged over the defaults.
config := object.union(default_config, supplied)

# namespace_mode is the value of the enforcement label of the namespace:
# "warn", "dryrun" or "off"; undefined when unset.
namespace_mode := input.namespace.labels[config.namespaceLabel]

# exempt is true when the user or the field manager is exempt from every
# rule.
exempt if input.request.user.username in config.exemptions.users

exempt if {
	some group in input.request.user.groups
	group in config.exemptions.groups
}

exempt if {
	some entry in config.exemptions.serviceAccounts
	service_account_matches(entry)
}

# A write is exempt when its effective field manager (e.g. "helm") is
# listed, whoever sends it. A write that names no manager never is.
exempt if {
	input.request.fieldManager != ""
	input.request.fieldManager in config.exemptions.fieldManagers
}

# service_account_matches(entry) is true when entry, "namespace/name" or
# "namespace/*", names the requesting service account.
service_account_matches(entry) if {
	[ns, name] := split(entry, "/")
	name != "*"
	input.request.user.username == concat(":", ["system:serviceaccount", ns, name])
}

service_account_matches(entry) if {
	[ns, name] := split(entry, "/")
	name == "*"
	startswith(input.request.user.username, concat(":", ["system:serviceaccount", ns, ""]))
}

# deploy_tool is true when the write's effective field manager is a
# deployment tool that applies its own manifests with Update writes, not
# server-side apply (config.deployTools; by default Helm 3's helm, whose
# upgrade and rollback are three-way patches): the write is that tool's
# apply, whoever runs it, not a person's edit. A write that names no
# manager never is.
deploy_tool if {
	input.request.fieldManager != ""
	input.request.fieldManager in config.deployTools
}

# break_glass is true when the user belongs to a break-glass group.
break_glass if {
	some group in input.request.user.groups
	group in config.breakGlassGroups
}

# role_action(rc) picks, from a rule's configuration, the action for this
# write: break-glass members first, then a deployment tool's writes
# (whoever runs it), then service accounts, then everyone.
role_action(rc) := rc.breakGlassAction if {
	break_glass
	rc.breakGlassAction != ""
} else := rc.deployToolAction if {
	deploy_tool
	rc.deployToolAction != ""
} else := rc.serviceAccountAction if {
	input.request.user.serviceAccount == true
	rc.serviceAccountAction != ""
} else := rc.action

# namespaced(a) applies the namespace's enforcement label to action a.
namespaced(a) := a if {
	a == "off"
} else := "dryrun" if {
	namespace_mode == "dryrun"
} else := "warn" if {
	namespace_mode == "warn"
	a == "deny"
} else := a

# action_or(rule, fallback) is the action rule takes for this request, with
# fallback when the configuration does not name the rule. Undefined when the
# rule is off, the user is exempt or the namespace is labelled off.
action_or(rule, fallback) := a if {
	not exempt
	not namespace_mode == "off"
	rc := object.union({"action": fallback}, object.get(config.rules, rule, {}))
	a := namespaced(role_action(rc))
	a != "off"
}

# action(rule) is action_or for a rule that the configuration names (all
# bundled rules do).
action(rule) := action_or(rule, "warn")

# audit_fix(rule) is true when the configuration lets the audit fix write
# rule's findings whose action is warn (the rule's auditFix knob).
default audit_fix(_) := false

audit_fix(rule) := true if object.get(object.get(config.rules, rule, {}), "auditFix", false) == true

# decision_or(rule, fallback, message, paths) is a decision of rule with
# the action in force; undefined when the rule is off for this request.
decision_or(rule, fallback, message, paths) := {
	"rule": rule,
	"action": action_or(rule, fallback),
	"message": message,
	"paths": paths,
}

# decision(rule, message, paths) is decision_or for a configured rule.
decision(rule, message, paths) := decision_or(rule, "warn", message, paths)

# fixed(d, command) is decision d with the kubectl command that fixes its
# finding, the one its message shows after "with: ": reports, kubectl
# hygiene audit and the tests read it from the decision, never from the
# message.
fixed(d, command) := object.union(d, {"fix": command})

# handover(paths) is the command that hands the fields at paths (in the
# messages' path syntax) over to their new writer by deleting them from
# last-applied: kubectl hygiene handover with the object, its namespace and
# then at most max_listed paths, each quoted for the shell when it has more
# than letters, digits and . _ / : -. The cap keeps the command whole within
# a warning cut at 1024 bytes; handover_more(paths) says what it leaves
# out.
handover(paths) := sprintf("kubectl hygiene handover %s%s %s", [
	kind_name,
	namespace_flag,
	concat(" ", [shell_word(p) | some p in array.slice(paths, 0, max_listed)]),
])

# handover_more(paths) is what a message adds after handover(paths) when
# the command leaves paths out, or "".
handover_more(paths) := sprintf(" (it names the first %d of the %d fields; hand the %d others over the same way)", [
	max_listed,
	count(paths),
	count(paths) - max_listed,
]) if {
	count(paths) > max_listed
} else := ""

# shell_word(s) is s as one shell word: as is when it is made of letters,
# digits and . _ / : - alone, else in single quotes. None of those is read
# by bash, zsh, PowerShell or cmd.exe inside a word, so a command with only
# plain words (system:aggregate-to-edit, an RBAC object's usual name, too)
# is pasted into any of them as printed; cmd.exe takes single quotes for
# part of the word.
shell_word(s) := s if {
	regex.match(`^[A-Za-z0-9._/:-]+$`, s)
} else := sprintf("'%s'", [replace(s, "'", `'\''`)])

# kind_name is the object as kubectl's RESOURCE/NAME argument, one shell
# word (an RBAC object's name may hold ; $ ( and spaces): the resource and
# its group, as kubectl writes them (deployments.apps/web; configmaps/x in
# the core group), so that no kind of the same name in another group (a
# custom resource's Deployment) is taken for it.
kind_name := shell_word(sprintf("%s/%s", [resource_arg, obj.name]))

# resource_arg is the object's resource qualified by its group: from the
# request's resource when the driver knows it (admission, the audit, the
# CLI), else the kind and the group of apiVersion (deployment.apps), which
# kubectl resolves too.
resource_arg := qualified(input.request.resource.resource, input.request.resource.group) if {
	input.request.resource.resource != ""
} else := qualified(lower(obj.kind), api_group)

# qualified(resource, group) is resource.group, or resource in the core
# group.
qualified(resource, group) := resource if {
	group == ""
} else := sprintf("%s.%s", [resource, group])

# api_group is the group of the object's apiVersion; "" for the core
# group (apiVersion "v1").
api_group := g if {
	[g, _] := split(obj.apiVersion, "/")
} else := ""

# namespace_flag is " -n namespace", or "" for a cluster-scoped object.
namespace_flag := sprintf(" -n %s", [shell_word(obj.namespace)]) if {
	obj.namespace != ""
} else := ""

# explain is the command that shows where live differs from last-applied.
explain := sprintf("kubectl hygiene explain %s", [target])

# view_last_applied is the command that shows last-applied.
view_last_applied := sprintf("kubectl apply view-last-applied %s", [target])

# analysis is input.analysis, or {} when the request has none. It is built
# field by field rather than bound whole (with a default), so that the
# partial evaluation at load, which finds the classifications an empty
# analysis leaves silent, sees which fields a rule reads:
# lib.analysis.orphans reads input.analysis.orphans alone. The bundled
# rules read input.analysis directly, which costs less.
analysis[key] := value if some key, value in input.analysis

# obj is the reference of the object written.
obj := input.request.object

# describe is how messages name the object: "Kind namespace/name".
describe := sprintf("%s %s/%s", [obj.kind, obj.namespace, obj.name]) if {
	obj.namespace != ""
} else := sprintf("%s %s", [obj.kind, obj.name])

# target is the object as kubectl arguments: "kind/name -n namespace".
target := sprintf("%s -n %s", [kind_name, shell_word(obj.namespace)]) if {
	obj.namespace != ""
} else := kind_name

# show(fact, key) renders a value of a field fact as JSON, or "(absent)"
# when the field is absent there.
show(fact, key) := show_or(fact, key, "(absent)")

# show_or(fact, key, absent) renders a value of a field fact as JSON, or
# absent when the field is absent there.
show_or(fact, key, absent) := unescape_html(json.marshal(fact[key])) if {
	fact[key] != null
} else := absent

# unescape_html undoes json.marshal's HTML escaping of <, > and &, which
# would show "<redacted>" as "\u003credacted\u003e" in kubectl's output.
unescape_html(s) := strings.replace_n({"\\u003c": "<", "\\u003e": ">", "\\u0026": "&"}, s)

# max_listed is how many fields a message lists before "and N more".
max_listed := 5

# list(texts) joins texts with commas, listing at most max_listed.
list(texts) := concat(", ", texts) if {
	count(texts) <= max_listed
} else := sprintf("%s and %d more", [concat(", ", array.slice(texts, 0, max_listed)), count(texts) - max_listed])

# apply_managers are the field managers of client-side apply.
apply_managers := {"kubectl-client-side-apply", "before-first-apply"}

# changer(fact) is the newest owner of the field that is not an apply.
changer(fact) := [o |
	some o in fact.owners
	not o.manager in apply_managers
	o.manager != object.get(input.request, "fieldManager", "")
][0]

# owner_text(o) renders an owner: "kubectl-edit at 2024-05-01T10:00:00Z".
owner_text(o) := sprintf("%s at %s", [o.manager, o.time]) if {
	o.time != ""
} else := o.manager

# who(fact) says who last changed a field outside apply, if known.
who(fact) := owner_text(changer(fact)) if {
	changer(fact)
} else := "an unknown writer"

# shell_quote(s) quotes s for a POSIX shell with single quotes.
shell_quote(s) := concat("", ["'", replace(s, "'", `'\''`), "'"])

# template_change(path, subject) says what a change of the field at path,
# made by subject ("removing it", "this apply"), does to the pods when path
# is inside a pod template: a workload's new template starts a rollout that
# replaces its pods; the template of a Job, ReplicaSet or
# ReplicationController only shapes the pods it creates next, and a
# CronJob's job template the Jobs it creates next. Undefined outside a pod
# template.
template_change(path, subject) := sprintf("%s changes the pod template, so it rolls the pods (a new rollout starts)", [subject]) if {
	rolls_pods(path)
} else := sprintf("%s changes the pod template of the pods that the %s creates from then on (running pods keep theirs)", [subject, obj.kind]) if {
	startswith(path, "spec.template.")
} else := sprintf("%s changes the pod template of the Jobs that the %s creates from then on (running Jobs keep theirs)", [subject, obj.kind]) if {
	startswith(path, "spec.jobTemplate.spec.template.")
}

# rolls_pods(path) is true when a change of the field at path starts a
# rollout that replaces the object's pods: path is inside the pod template
# of a kind whose template change does (not without_rollout).
rolls_pods(path) if {
	startswith(path, "spec.template.")
	not without_rollout
}

# without_rollout is true for the built-in kinds with a pod template whose
# change replaces no running pod.
without_rollout if {
	[obj.apiVersion, obj.kind] in {["batch/v1", "Job"], ["apps/v1", "ReplicaSet"], ["v1", "ReplicationController"]}
}

# last_applied_path is the annotation's path in kubectl's notation.
last_applied_path := "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"

# last_applied_pointer is the annotation's JSON pointer (RFC 6901), where
# a remedy writes it.
last_applied_pointer := "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"

# handed_over_annotation is the record of the fields that kubectl hygiene
# handover took out of last-applied (merge.HandedOverAnnotation);
# handed_over_path and handed_over_pointer are its path and its pointer.
handed_over_annotation := "apply-hygiene.io/handed-over"

handed_over_path := sprintf("metadata.annotations[%s]", [handed_over_annotation])

handed_over_pointer := "/metadata/annotations/apply-hygiene.io~1handed-over"

# A decision's remedy is its "patch": the JSON patch (RFC 6902) that the
# mutating pass applies to the object in the same request when the action
# writes (writes(a)), and that the audit's fix writes to a stored object.
# A rule builds it from merge's facts in its input, never from its
# message.
writes(a) if a in {"repair", "prune"}

# remove(f) is the remedy that removes the field of the fact f (an orphan,
# a defaulted dependent) at its pointer in the object after the write,
# then each field at f's removedWith, pointers into the same object of the
# fields that must go with it or the API server puts it back from them (a
# pod spec's deprecated serviceAccount beside serviceAccountName); no
# operation when merge gives the field no pointer (the object no longer
# has it, or its removal would not stick).
remove(f) := array.concat([{"op": "remove", "path": p}], [{"op": "remove", "path": q} | some q in object.get(f, "removedWith", [])]) if {
	p := object.get(f, "pointer", "")
	p != ""
} else := []

# The audit (classification "audit": kubectl hygiene audit and the
# server's periodic audit) judges an object as stored, with merge's live
# analysis: the state of last-applied, the fields that drifted from it, the
# orphans, and a rollback when the pod template is an older revision than
# the one last-applied describes. Each rule's file holds its audit branch;
# its finding keeps the rule ID that admission uses for the write that
# caused it, and its message describes the stored object, not a request.
audited if input.classification == "audit"

audited_present if {
	audited
	input.analysis.lastApplied.status == "present"
}

default audit_rollback := {}

audit_rollback := input.analysis.rollback if input.analysis.rollback != null

audit_stale if audit_rollback.staleLastApplied == true

# explained(p) is true when the stale last-applied explains the field at p:
# the undo changed it, so the stale-last-applied finding covers it.
explained(p) if {
	audit_stale
	some c in audit_rollback.changes
	related(p, c.path)
}

related(p, q) if p == q

related(p, q) if startswith(p, concat("", [q, "."]))

related(p, q) if startswith(p, concat("", [q, "["]))

related(p, q) if startswith(q, concat("", [p, "."]))

related(p, q) if startswith(q, concat("", [p, "["]))

# audit_drift are the drifted fields of a stored object that no stale
# last-applied explains.
audit_drift contains f if {
	audited_present
	some f in input.analysis.drift
	not explained(f.path)
}

# by_person(f) is true when a person (a kubectl field manager, or nobody
# known) changed the drifted field last; drift that a controller (an
# autoscaler, an operator) made is reported as apply-reverts-drift.
by_person(f) if not changer(f)

by_person(f) if changer(f).manager == "kubectl"

by_person(f) if startswith(changer(f).manager, "kubectl-")
