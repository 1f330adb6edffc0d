package policy

import "github.com/apply-hygiene/apply-hygiene/merge"

// Classification says what kind of write a request is.
type Classification string

const (
	// ClientSideApply is kubectl apply without --server-side.
	ClientSideApply Classification = "client-side-apply"
	// ServerSideApply is an apply patch (kubectl apply --server-side).
	ServerSideApply Classification = "server-side-apply"
	// Imperative is kubectl edit, patch, set, label or annotate.
	Imperative Classification = "imperative"
	// RolloutUndo is kubectl rollout undo.
	RolloutUndo Classification = "rollout-undo"
	// RolloutRestart is kubectl rollout restart.
	RolloutRestart Classification = "rollout-restart"
	// Scale is a write to the scale subresource (kubectl scale).
	Scale Classification = "scale"
	// SaveConfig is kubectl create or replace with --save-config.
	SaveConfig Classification = "save-config"
	// Controller is a write by a controller.
	Controller Classification = "controller"
	// Audit is a stored object that the audit judges (package audit):
	// no write. Its decisions carry Decision.Bundled.
	Audit Classification = "audit"
)

// Input is the policy input: the JSON document that Rego sees as input.
// docs/policy-input.md describes it with an example per classification.
type Input struct {
	// Request summarizes the admission request.
	Request Request `json:"request"`
	// Namespace is the namespace of the object; empty for cluster-scoped
	// objects.
	Namespace Namespace `json:"namespace"`
	// Classification is the kind of write.
	Classification Classification `json:"classification"`
	// Analysis holds the facts that merge derived about the write; nil
	// when there are none.
	// The orphaned-field message prints each orphan's RemovePatch as a
	// kubectl patch command.
	Analysis *merge.Analysis `json:"analysis,omitempty"`
	// Autoscaling lists the HorizontalPodAutoscalers that scale the
	// object; nil (left out) when none does, or when they are unknown
	// (the server's cache has not synced, or the lookup failed).
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
}

// Request summarizes an admission request.
type Request struct {
	// UID is the admission request's UID.
	UID string `json:"uid"`
	// Operation is CREATE, UPDATE, DELETE or CONNECT; PATCH arrives as
	// UPDATE.
	Operation string `json:"operation"`
	// Subresource is "scale" for kubectl scale, "" for the object itself.
	Subresource string `json:"subresource"`
	// DryRun is set for dry-run requests.
	DryRun bool `json:"dryRun"`
	// Object names the object written.
	Object merge.ObjectRef `json:"object"`
	// Resource is the object's resource and group, as the API server
	// names them (the admission request's resource; the audit's): the
	// messages' commands name the object as kubectl's
	// RESOURCE.GROUP/NAME with it, which no kind of the same name in
	// another group can take. Nil (left out) when unknown: the commands
	// then name it by its kind and group.
	Resource *GroupResource `json:"resource,omitempty"`
	// User is who sent the request.
	User User `json:"user"`
	// FieldManager is the effective field manager of this write; "" when
	// none was sent.
	FieldManager string `json:"fieldManager"`
}

// GroupResource is a resource and its API group ("" for the core group).
type GroupResource struct {
	// Group is the API group, e.g. "apps"; "" for the core group.
	Group string `json:"group"`
	// Resource is the resource, plural and lower case, e.g. "deployments".
	Resource string `json:"resource"`
}

// User is the authenticated user of a request.
type User struct {
	// Username is the user's name, e.g. "alice" or
	// "system:serviceaccount:ns:name".
	Username string `json:"username"`
	// Groups are the user's groups.
	Groups []string `json:"groups"`
	// ServiceAccount is set when the user is a service account.
	ServiceAccount bool `json:"serviceAccount"`
}

// Namespace describes the namespace of the object written.
type Namespace struct {
	// Name is the namespace's name.
	Name string `json:"name"`
	// Labels are the namespace's labels; the enforcement label
	// (Config.NamespaceLabel) overrides actions there.
	Labels map[string]string `json:"labels"`
}
