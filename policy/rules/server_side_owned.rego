# server-side-owned: a write other than apply by a person (kubectl edit,
# patch, set, label, annotate, scale) changes or removes fields that a
# server-side applier owns: kubectl apply --server-side, or a GitOps
# controller that applies server-side (Flux's kustomize-controller and
# helm-controller, Argo CD with server-side apply, Helm 4). The write takes
# the field over in managedFields; the applier's next apply puts its value
# back (controllers apply with force), or, for kubectl apply --server-side
# without --force-conflicts, stops on the conflict. imperative-edit covers
# what last-applied owns; a field both own is left to it.
package applyhygiene.rules.server_side_owned

import data.applyhygiene.lib

# classifications are the writes by people that are not an apply. Not
# rollout-restart: the restartedAt annotation it adds is a new field no
# applier owns, and a server-side apply removes only what its applier
# applied, so the restart holds; but see restart_undone below.
classifications := {"imperative", "scale"}

last_applied_paths := {c.path | some c in input.analysis.imperativeChanges}

changes := [c |
	some c in input.analysis.applyOwnedChanges
	not c.path in last_applied_paths
]

decisions contains lib.fixed(lib.decision("server-side-owned", message(m), paths(m)), fix(m)) if {
	input.classification in classifications
	some m in managers
}

# managers are the appliers owning a changed field: one decision each, so
# that each message names one applier and what it will do.
managers contains o.manager if {
	some c in changes
	some o in c.owners
	o.operation == "Apply"
}

owned_by(m) := [c |
	some c in changes
	some o in c.owners
	o.manager == m
]

paths(m) := [c.path | some c in owned_by(m)]

fields(m) := lib.list([text |
	some c in owned_by(m)
	text := sprintf("%s (applied %s, now %s)", [c.path, lib.show(c, "live"), lib.show_or(c, "result", "removed")])
])

# writer names the request: its user and field manager.
writer := sprintf("this write by %s (field manager %s)", [input.request.user.username, input.request.fieldManager]) if {
	input.request.fieldManager != ""
} else := sprintf("this write by %s", [input.request.user.username])

# tools names the GitOps tools behind the field managers they apply with,
# and where a change belongs instead.
tools := {
	"kustomize-controller": "Flux (kustomize-controller); make the change in the Git source of its Kustomization",
	"helm-controller": "Flux (helm-controller); make the change in the values of its HelmRelease",
	"argocd-controller": "Argo CD; make the change in the Git source of its Application",
	"helm": "Helm; make the change in the chart's values and run helm upgrade",
}

message(m) := sprintf(
	"[server-side-owned] %s: %s changes fields that kubectl apply --server-side applied: %s; the next kubectl apply --server-side of the manifest fails on the conflict, or puts the applied values back with --force-conflicts. Put the change in your manifest and apply it with: %s",
	[lib.describe, writer, fields(m), server_side_apply],
) if {
	m == "kubectl"
} else := sprintf(
	"[server-side-owned] %s: %s changes fields that %s applies server-side: %s; its next apply puts the applied values back. It is managed by %s",
	[lib.describe, writer, m, fields(m), tools[m]],
) if {
	tools[m]
} else := sprintf(
	"[server-side-owned] %s: %s changes fields that %s applies server-side: %s; its next apply puts the applied values back (controllers apply with force). Make the change in what %s applies",
	[lib.describe, writer, m, fields(m), m],
)

server_side_apply := "kubectl apply --server-side -f <manifest>"

# fix(m) is the command that moves a change into what m applies: shown
# only for kubectl's own server-side apply.
fix(m) := server_side_apply if m == "kubectl" else := ""

# A kubectl rollout restart of an object Argo CD applies: Argo CD compares
# the whole live object with Git, sees the restartedAt annotation as a
# difference, and with self-heal syncs it away, which undoes the restart
# (argoproj/argo-helm#3654, argoproj/argo-cd discussion 12410). Argo CD
# documents two ways out: its own restart action, or ignoring the
# annotation in the Application's ignoreDifferences. Flux's
# kustomize-controller leaves fields it does not own, so a restart holds
# there and nothing is said.
restart_undoers := {"argocd-controller"}

decisions contains lib.decision("server-side-owned", restart_message(m), [restarted_at]) if {
	input.classification == "rollout-restart"
	some o in input.analysis.appliers
	m := o.manager
	m in restart_undoers
}

restarted_at := "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"

restart_message(m) := sprintf(
	"[server-side-owned] %s: kubectl rollout restart adds %s, which Git does not have, to an object that Argo CD applies (field manager %s); with self-heal Argo CD syncs it away and the restart is undone. Restart through Argo CD with: argocd app actions run <application> restart --kind %s --resource-name %s, or add /spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt to the Application's ignoreDifferences",
	[lib.describe, restarted_at, m, input.request.object.kind, input.request.object.name],
)
