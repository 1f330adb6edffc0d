package review

import (
	"context"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/internal/tracing"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Update is one UPDATE of an object as admission sees it, already
// decoded: what ReviewUpdate reviews without an AdmissionRequest, for a
// driver that predicts a write rather than receives one (`kubectl hygiene
// diff` predicts the UPDATE that kubectl apply will send).
type Update struct {
	// UID identifies the request in the policy input; empty for a
	// predicted write.
	UID string
	// Namespace is the request's namespace; empty: New's.
	Namespace string
	// Resource is the request's resource, for the removal proofs
	// (RemovalProver); empty: the prover finds it.
	Resource schema.GroupVersionResource
	// Subresource is the request's subresource: "" for the object
	// itself, "scale" for /scale (then Old and New are the parent, as
	// stored and with the new replica count).
	Subresource string
	// FieldManager is options.fieldManager as the client sends it:
	// "kubectl-client-side-apply" for kubectl apply.
	FieldManager string
	// User is who sends the write, as the API server authenticates it.
	User authenticationv1.UserInfo
	// DryRun is the request's dry-run flag.
	DryRun bool
	// Old is the object as stored, New the object as written; both are
	// required and neither is modified.
	Old, New *unstructured.Unstructured
}

// ReviewUpdate classifies, analyzes and evaluates u, exactly as Review
// does an UPDATE request once decoded: Review ends here. It returns nil
// (and no error) for a write to a subresource other than /scale
// (reviewsSubresource), a write to an object being deleted (beingDeleted),
// apply-hygiene's own removal proofs, a write that only hands field
// ownership over (handsOverOwnership), a controller's write and writes
// that the pass does not review.
func (r *Reviewer) ReviewUpdate(ctx context.Context, u Update, pass Pass) (*Review, error) {
	if u.Old == nil || u.New == nil {
		return nil, errors.New("reviewing an update needs the old and the new object")
	}
	if !reviewsSubresource(u.Subresource) || beingDeleted(u.Old) {
		return nil, nil
	}
	if u.DryRun && u.FieldManager == kube.DryRunFieldManager {
		// apply-hygiene's own removal proof (RemovalProver).
		return nil, nil
	}
	if handsOverOwnership(u.Old, u.New) {
		// Not an apply, not an edit: no field moves.
		return nil, nil
	}
	w := newWrite(u.Subresource, u.FieldManager, u.User, u.Old, u.New)
	w.controllers = r.controllers
	class := classify(w)
	if class == policy.Controller || !pass.wants(w, class) {
		return nil, nil
	}
	actx, span := tracing.Start(ctx, r.tracer, tracing.SpanAnalysis)
	in, err := r.analyze(actx, w, class)
	if err == nil {
		r.proveOrphans(actx, u, w, in.Classification, in.Analysis)
	}
	span.End(err)
	if err != nil {
		return nil, err
	}
	in.Request = requestSummary(u, w)
	ns := u.Namespace
	if ns == "" {
		ns = u.New.GetNamespace()
	}
	if in.Namespace.Labels, err = r.cluster.NamespaceLabels(ctx, ns); err != nil {
		return nil, err
	}
	in.Namespace.Name = ns
	in.Autoscaling = r.autoscaling(ctx, w, class)
	pctx, span := tracing.Start(ctx, r.tracer, tracing.SpanPolicy)
	decisions, err := r.evaluator.Evaluate(pctx, in)
	span.End(err)
	if err != nil {
		return nil, fmt.Errorf("evaluating policies: %w", err)
	}
	tracing.Decisions(ctx, string(in.Classification), decisions, func(d policy.Decision) (string, string) { return string(d.Rule), string(d.Action) })
	return &Review{Input: in, Decisions: decisions, Old: w.old, New: w.new}, nil
}

// updateOf is the Update of a decoded UPDATE request.
func updateOf(req *admissionv1.AdmissionRequest, old, new *unstructured.Unstructured) Update {
	return Update{
		UID:          string(req.UID),
		Namespace:    req.Namespace,
		Resource:     schema.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource},
		Subresource:  req.SubResource,
		FieldManager: fieldManagerOption(req.Options.Raw),
		User:         req.UserInfo,
		DryRun:       req.DryRun != nil && *req.DryRun,
		Old:          old,
		New:          new,
	}
}

func requestSummary(u Update, w write) policy.Request {
	return policy.Request{
		UID:          u.UID,
		Operation:    string(admissionv1.Update),
		Subresource:  u.Subresource,
		DryRun:       u.DryRun,
		Object:       merge.RefOf(w.new),
		Resource:     resourceOf(u.Resource),
		FieldManager: w.manager,
		User: policy.User{
			Username:       u.User.Username,
			Groups:         u.User.Groups,
			ServiceAccount: isServiceAccount(u.User),
		},
	}
}

// resourceOf is the request's resource for the policy input; nil when
// the driver does not know it.
func resourceOf(gvr schema.GroupVersionResource) *policy.GroupResource {
	if gvr.Resource == "" {
		return nil
	}
	return &policy.GroupResource{Group: gvr.Group, Resource: gvr.Resource}
}

// reviewsSubresource reports whether a write to subresource is reviewed:
// the object itself ("") and /scale, whose count is the object's own
// field, set in the object as the next apply sets it. Any other
// subresource (/status, a pod's /resize or /ephemeralcontainers, a
// custom resource's) is not the object's write: the API server keeps of
// it only the subresource's fields (a /status write keeps the stored
// spec, a custom resource's its metadata too), which the next apply does
// not write or, like a pod's resources, cannot; and an Apply entry of the
// subresource is no configuration of the object (AnalyzeServerSideApply
// reads the main resource's). Judged as the object's write, kubectl apply
// --server-side --subresource=status was a server-side apply that
// warned of the earlier apply's orphans and, with prune, removed one in a
// request whose spec the API server throws away. The chart intercepts no
// other subresource: its presets list /scale alone, and it rejects any
// other in extraKinds (test/chart matchconditions_test.go).
func reviewsSubresource(subresource string) bool {
	return subresource == "" || subresource == "scale"
}

// beingDeleted reports whether obj is being deleted: the API server has
// set its deletionTimestamp and waits for its finalizers. No rule acts on
// a write to it (no denial, warning, repair or prune, whoever writes):
// there is no next apply to such an object, and the writes it still gets
// (a controller or a person removing a finalizer, so that the deletion
// can finish) must never be held up. Its finalizers are never an
// imperative edit. Deciding it here, before classification, keeps it in
// one place for every driver of the core.
func beingDeleted(obj *unstructured.Unstructured) bool {
	return obj.GetDeletionTimestamp() != nil
}
