package generative_test

import (
	"reflect"
	"strings"
)

// who is the identity a step runs as.
type who string

// The identities of the writers. Only alice is a person.
const (
	// alice is a person: a user with the edit role.
	alice who = "alice"
	// robot is a service account of the object's namespace: an
	// autoscaler, a Reloader, a finalizer controller.
	robot who = "robot"
	// helmCI is a CI job running helm, an account of the object's
	// namespace.
	helmCI who = "helm"
	// keda is a KEDA-like operator's account in kube-system.
	keda who = "keda-operator"
	// argocd is Argo CD's account in a cluster it manages, in kube-system.
	argocd who = "argocd-manager"
	// flux is Flux's kustomize-controller, in flux-system.
	flux who = "kustomize-controller"
	// gc is kube-controller-manager's garbage collector
	// (--use-service-account-credentials).
	gc who = "generic-garbage-collector"
	// bob is a person with the edit role whom the configuration exempts
	// from every rule (policy.exemptions.users, TestMain): his kubectl
	// rollout undo gets no repair at admission and leaves last-applied
	// stale for the periodic audit (exemptUndo).
	bob who = "bob"
)

// namespaceOf is the namespace of who's service account; "" for a user.
func (w who) namespaceOf() string {
	switch w {
	case keda, argocd, gc:
		return "kube-system"
	case flux:
		return "flux-system"
	case alice, admin, bob:
		return ""
	}
	return "."
}

// username is how the API server names who; ns is the object's namespace.
func (w who) username(ns string) string {
	switch w.namespaceOf() {
	case "":
		return string(w)
	case ".":
		return "system:serviceaccount:" + ns + ":" + string(w)
	}
	return "system:serviceaccount:" + w.namespaceOf() + ":" + string(w)
}

func (w who) person() bool { return w == alice }

// setsAsAPerson reports whether what who sets is a person's in the truth
// model: alice's, and bob's, whom the configuration exempts from the
// rules' decisions on his writes, not from being a person.
func (w who) setsAsAPerson() bool { return w == alice || w == bob }

// controller reports whether who is one of kube-controller-manager's own
// accounts, whose writes no rule reviews.
func (w who) controller() bool { return w == gc }

// kind tells the truth model what a step is.
type kind int

const (
	// write is any write that is not one of the kinds below.
	write kind = iota
	// clientSideApply is kubectl apply (client-side) of Stdin.
	clientSideApply
	// dryRunApply is kubectl apply --dry-run=server of Stdin.
	dryRunApply
	// serverSideApply is kubectl apply --server-side of Stdin.
	serverSideApply
	// undo is kubectl rollout undo (or oc's, which is kubectl's code:
	// Binary).
	undo
	// dryRunUndo is kubectl rollout undo --dry-run=server: the API
	// server runs the undo through admission and writes nothing.
	dryRunUndo
	// remedy runs the commands that the previous apply's
	// orphaned-field warnings print.
	remedy
	// handover runs the kubectl hygiene handover command that the
	// previous write's denial prints (runHandover).
	handover
	// deletion deletes the object, which a finalizer holds.
	deletion
	// finalizerRemoval removes the finalizer of an object being
	// deleted.
	finalizerRemoval
	// hygiene runs kubectl hygiene (Args[0] is "hygiene"): apply-hygiene
	// itself writes.
	hygiene
)

// step is one command of a sequence, as concrete as a user types it.
type step struct {
	// Writer names the writer of the catalogue.
	Writer string
	// As is the identity the command runs as.
	As   who
	Kind kind
	// Args are kubectl's arguments, without the namespace.
	Args []string
	// Stdin is the manifest of `-f -`, as JSON.
	Stdin string
	// Edit is the jq filter of kubectl edit's editor (KUBE_EDITOR) for
	// kubectl edit -o json; "" for any other command.
	Edit string
	// Manager, when set, makes the step a server-side apply of Stdin
	// with force under this field manager, sent through client-go as a
	// tool that is not kubectl sends it (Args only print it).
	Manager string
	// RewritesLastApplied marks a write that also sets last-applied
	// (edit or replace with --save-config, kubectl apply
	// set-last-applied): it moves nothing away from last-applied.
	RewritesLastApplied bool
	// HandsOver are the fields that a handover step's command names, as
	// the denial it follows printed them: a replay whose denial before
	// offers others (the minimiser dropped the one it followed) runs
	// nothing.
	HandsOver []string
	// Binary, when set, is the file name kubectl runs under ("oc"):
	// client-go names the user agent, and so the field manager of a
	// write that sends none, after it (runner.binary).
	Binary string
}

// command renders the step as kubectl's command line.
func (s step) command() string {
	if s.Kind == remedy {
		return "<the commands the previous apply's orphaned-field warnings print>"
	}
	if s.Kind == handover {
		return "<the kubectl hygiene handover command the previous write's denial prints>"
	}
	if s.Manager != "" {
		return "# server-side apply as " + s.Manager + " (client-go, no kubectl migration of client-side apply's fields)"
	}
	if s.Edit != "" {
		return "KUBE_EDITOR=<jq " + s.Edit + "> kubectl " + strings.Join(s.Args, " ")
	}
	return s.binary() + " " + strings.Join(s.Args, " ")
}

// binary is the name of the command the step runs: kubectl, or kubectl
// under another file name (Binary).
func (s step) binary() string {
	if s.Binary != "" {
		return s.Binary
	}
	return "kubectl"
}

// syncsLastApplied reports whether s is kubectl apply --server-side under
// kubectl's default field manager, kubectl: the API server then rewrites
// a last-applied the object has to the applied manifest in the apply
// itself (apimachinery's lastAppliedUpdater, for the manager kubectl
// only), and kubectl keeps it through its migration of client-side
// apply's fields (under kubectl-last-applied). Such an apply moves
// nothing away from last-applied, as a client-side apply moves nothing;
// under any other manager the migration drops last-applied after the
// apply (movedFrom).
func (s step) syncsLastApplied() bool {
	m := s.fieldManagerFlag()
	return s.Kind == serverSideApply && s.Manager == "" && (m == "" || m == "kubectl")
}

// fieldManagerFlag is the value of the step's --field-manager= flag; ""
// when it has none.
func (s step) fieldManagerFlag() string {
	for _, a := range s.Args {
		if m, ok := strings.CutPrefix(a, "--field-manager="); ok {
			return m
		}
	}
	return ""
}

// appliesUnnamed reports whether s is a client-side kubectl apply under a
// field manager of its own (--field-manager=ci-deployer) that left
// last-applied as it was, or changed nothing else
// (onlyLastAppliedDiffers): the API server's review then names only that
// manager, and shows no change of last-applied, which is what kubectl
// patch --field-manager=ci-deployer sends too, or a change of it alone,
// which is what kubectl apply edit-last-applied
// --field-manager=ci-deployer sends. No reviewer can tell either from an
// apply (generative seed 281154: sequence 002's apply of the manifest
// last-applied held, after a person's kubectl set env; sequence 005's,
// after Flux's clean-up had dropped last-applied).
func (s step) appliesUnnamed(before, after map[string]any) bool {
	if s.Kind != clientSideApply || !reflect.DeepEqual(lastApplied(before), lastApplied(after)) && !onlyLastAppliedDiffers(before, after) {
		return false
	}
	m := s.fieldManagerFlag()
	return m != "" && m != clientSideApplier
}

// namesApplier reports whether the step writes under kubectl apply's
// field manager name without being an apply.
func (s step) namesApplier() bool {
	return s.Kind != clientSideApply && s.fieldManagerFlag() == clientSideApplier
}

// clientSideApplier is kubectl apply's field manager.
const clientSideApplier = "kubectl-client-side-apply"
