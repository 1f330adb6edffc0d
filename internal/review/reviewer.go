package review

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/trace"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Evaluator decides what to do about a write: the policy engine.
type Evaluator = policy.Evaluator

// Cluster reads what a review needs beyond the request itself; a
// *kube.Cluster on the API server is one.
type Cluster interface {
	// Object returns the object gvr/namespace/name (the parent of a /scale
	// request).
	Object(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error)
	// Revisions returns the ReplicaSets (Deployment) or ControllerRevisions
	// (StatefulSet, DaemonSet) that obj controls, both for another kind
	// (an Argo Rollout's ReplicaSets).
	Revisions(ctx context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error)
	// NamespaceLabels returns the labels of a namespace.
	NamespaceLabels(ctx context.Context, name string) (map[string]string, error)
}

var _ Cluster = (*kube.Cluster)(nil)

// Reviewer reviews admission requests; it is safe for concurrent use.
type Reviewer struct {
	analyzer  *merge.Analyzer
	evaluator Evaluator
	cluster   Cluster
	// controllers are WithControllerUsers' user names.
	controllers map[string]bool
	// tracer is WithTracer's; nil: no spans.
	tracer trace.Tracer
}

// NewReviewer returns a Reviewer that analyzes with analyzer (nil:
// merge.NewAnalyzer()), asks evaluator and reads from cluster.
func NewReviewer(analyzer *merge.Analyzer, evaluator Evaluator, cluster Cluster, opts ...Option) *Reviewer {
	if analyzer == nil {
		analyzer = merge.NewAnalyzer()
	}
	r := &Reviewer{analyzer: analyzer, evaluator: evaluator, cluster: cluster}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Pass says which admission pass reviews a request.
type Pass int

const (
	// Validate reviews every write: the validating webhook, which denies
	// and warns.
	Validate Pass = iota
	// Mutate reviews the writes whose decisions the mutating webhook can
	// carry out: applies (defaulted dependents, pruned orphans, replicas
	// kept by replicas-reset's repair), rollout undos (stale last-applied),
	// hand-overs through last-applied alone (handsOverThroughLastApplied:
	// orphaned-field's record of them) and applies that dropped that
	// record (dropsRecord). Analyzing other writes there would
	// only repeat the validating pass's work.
	Mutate
)

// wants reports whether the pass reviews w.
func (p Pass) wants(w write, class policy.Classification) bool {
	if p == Mutate {
		return class == policy.ClientSideApply || class == policy.ServerSideApply || undoCandidate(w) || handsOverThroughLastApplied(w, class) ||
			dropsRecord(w, class)
	}
	return true
}

// dropsRecord reports whether w is an apply that left no hand-over record
// (merge.HandedOverAnnotation) where the object had one
// (merge.RecordDroppedByApply): a client- or server-side apply, or a
// kubectl apply that changed nothing but last-applied and the record
// (classified a save-config), whose manifest lacked the record that
// last-applied held. Not kubectl replace --save-config nor kubectl edit
// --save-config: a person who replaces the object or deletes the record
// in the editor drops it on purpose, as kubectl annotate does.
func dropsRecord(w write, class policy.Classification) bool {
	switch {
	case class == policy.ClientSideApply || class == policy.ServerSideApply:
	case class == policy.SaveConfig && w.manager == merge.ClientSideApplyManager:
	default:
		return false
	}
	_, had := w.old.GetAnnotations()[merge.HandedOverAnnotation]
	_, has := w.new.GetAnnotations()[merge.HandedOverAnnotation]
	return had && !has
}

// handsOverThroughLastApplied reports whether w changes last-applied
// alone, as kubectl apply edit-last-applied and set-last-applied do: the
// fields it takes out of last-applied are handed over
// (merge.HandOverThroughLastApplied). Not a last-applied that only the
// write's own tool wrote (lastAppliedIsKubectls: a Helm chart's template
// copied from kubectl get -o yaml, which helm upgrade changes): kubectl
// apply never read it. Unless that tool wrote nothing but last-applied
// (merge.OwnsOnlyLastApplied): an earlier edit-last-applied under the
// same --field-manager, whose last-applied is kubectl's.
func handsOverThroughLastApplied(w write, class policy.Classification) bool {
	return class == policy.SaveConfig && onlyLastAppliedChanged(w.old, w.new) &&
		(lastAppliedIsKubectls(w) || merge.OwnsOnlyLastApplied(w.old, w.manager))
}

// Review is the outcome of one request: what was decided, on what.
type Review struct {
	// Input is the policy input the decisions were made on.
	Input *policy.Input
	// Decisions are the policies' decisions.
	Decisions []policy.Decision
	// Old and New are the objects analyzed: for /scale, the parent as
	// stored and with the new replica count.
	Old, New *unstructured.Unstructured
}

// Review decodes, classifies, analyzes and evaluates req, whose objects
// are raw (DecodeObjects decodes them; ReviewDecoded reviews them). It
// returns nil (and no error) for requests it has no opinion on (anything
// but UPDATE, a subresource other than /scale, a controller's write, a
// /scale write whose count field cannot be known: see ScaleCluster) and for those that the pass does not
// review. An error that wraps ErrBadRequest means req itself is malformed.
func (r *Reviewer) Review(ctx context.Context, req *admissionv1.AdmissionRequest, pass Pass) (*Review, error) {
	if err := checkRequest(req); err != nil || req.Operation != admissionv1.Update {
		return nil, err
	}
	objs, err := DecodeObjects(req)
	if err != nil {
		return nil, err
	}
	return r.ReviewDecoded(ctx, req, objs, pass)
}

// ReviewDecoded is Review for a request whose objects objs were decoded
// with it (the webhook decodes an AdmissionReview once, objects included);
// req's raw objects are not read. Review ends here too: the checks,
// classification, analysis and decisions are the same.
func (r *Reviewer) ReviewDecoded(ctx context.Context, req *admissionv1.AdmissionRequest, objs *Objects, pass Pass) (*Review, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	if req.Operation != admissionv1.Update || !reviewsSubresource(req.SubResource) {
		return nil, nil
	}
	if objs == nil {
		objs = &Objects{}
	}
	if objs.Err != nil {
		return nil, objs.Err
	}
	old, new, err := r.objects(ctx, req, objs)
	if err != nil || old == nil {
		return nil, err
	}
	return r.ReviewUpdate(ctx, updateOf(req, old, new), pass)
}

// checkRequest refuses an AdmissionReview without the request fields
// every API server sends.
func checkRequest(req *admissionv1.AdmissionRequest) error {
	if req.UID == "" || req.Operation == "" || req.Kind.Kind == "" {
		return fmt.Errorf("%w: the AdmissionReview has no request (uid, operation and kind are required)", ErrBadRequest)
	}
	return nil
}

// objects returns the old and new object of an UPDATE, objs checked
// (pair); for /scale, the parent as stored and as it would be with the new
// replica count at the field the parent's kind keeps it
// (scaleReplicasPath), or none (nil, and no error) when that field cannot
// be known or set.
func (r *Reviewer) objects(ctx context.Context, req *admissionv1.AdmissionRequest, objs *Objects) (old, new *unstructured.Unstructured, err error) {
	if req.SubResource != "scale" {
		return pair(req, objs)
	}
	replicas, err := ScaleReplicas(req, objs)
	if err != nil {
		return nil, nil, err
	}
	gvr := schema.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource}
	path, ok := r.scaleReplicasPath(ctx, gvr)
	if !ok {
		return nil, nil, nil
	}
	parent, err := r.cluster.Object(ctx, gvr, req.Namespace, req.Name)
	if err != nil {
		return nil, nil, err
	}
	scaled := parent.DeepCopy()
	if err := unstructured.SetNestedField(scaled.Object, replicas, path...); err != nil {
		// The API server sets the count the same way and fails on the
		// same object: the parent changed since (a null on the path).
		logr.FromContextOrDiscard(ctx).V(1).Info("scale path not settable on the parent, not reviewing the scale",
			"resource", gvr.String(), "path", strings.Join(path, "."), "error", err.Error())
		return nil, nil, nil
	}
	if err := claimScaled(scaled, path, fieldManagerOption(req.Options.Raw)); err != nil {
		return nil, nil, err
	}
	return parent, scaled, nil
}

// claimScaled gives the count at path in scaled to the scale's manager, as
// the API server does for the write: every other entry loses it and an
// Update entry of the scale subresource owns it, under the manager the
// client named (none when it named none, as the review has always named
// it: the API server's name from the user agent is not in the request).
// Without that the scaled parent kept the stored
// managedFields, and a count no entry owned (after a scale to 0, whose
// Scale sends "spec":{} and owns nothing) looked changed by another
// mutating webhook, not by the scale. An object without managedFields
// keeps none: then nothing tells who changed what.
func claimScaled(scaled *unstructured.Unstructured, path []string, manager string) error {
	entries := scaled.GetManagedFields()
	if len(entries) == 0 {
		return nil
	}
	for i, e := range entries {
		if e.FieldsV1 == nil {
			continue
		}
		fields := map[string]any{}
		if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields); err != nil {
			return fmt.Errorf("decoding managedFields[%d] of %q: %w", i, e.Manager, err)
		}
		node := fields
		for _, name := range path[:len(path)-1] {
			if node, _ = node["f:"+name].(map[string]any); node == nil {
				break
			}
		}
		if node == nil {
			continue
		}
		delete(node, "f:"+path[len(path)-1])
		raw, err := json.Marshal(fields)
		if err != nil {
			return fmt.Errorf("encoding managedFields[%d] of %q: %w", i, e.Manager, err)
		}
		entries[i].FieldsV1 = metav1.NewFieldsV1(string(raw))
	}
	owned := map[string]any{}
	for i := len(path) - 1; i >= 0; i-- {
		owned = map[string]any{"f:" + path[i]: owned}
	}
	raw, err := json.Marshal(owned)
	if err != nil {
		return fmt.Errorf("encoding the scale's managedFields: %w", err)
	}
	now := metav1.Now()
	entries = append(entries, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "autoscaling/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw)), Subresource: "scale"})
	scaled.SetManagedFields(entries)
	return nil
}

// ScaleReplicas checks the Scale object of a /scale request, objs.Object
// (decoded with the request: see Objects), and returns its spec.replicas.
// A Scale without one is a scale to zero: replicas is omitempty in every
// Scale version, so the API server sends "spec":{} for `kubectl scale
// --replicas=0` (and for the HPA or KEDA scaling to zero). The error wraps
// ErrBadRequest only for a body no API server sends: no Scale object (objs
// nil or without one), or a spec.replicas that is not an integer.
func ScaleReplicas(req *admissionv1.AdmissionRequest, objs *Objects) (int64, error) {
	var object any
	if objs != nil {
		object = objs.Object
	}
	scale, err := objectOf(object, requestKind(req), "object")
	if err != nil {
		return 0, err
	}
	spec, _ := scale.Object["spec"].(map[string]any)
	value, found := spec["replicas"]
	if !found || value == nil {
		return 0, nil
	}
	replicas, ok := value.(int64)
	if !ok {
		return 0, fmt.Errorf("%w: the Scale object's spec.replicas is %v, not an integer", ErrBadRequest, value)
	}
	return replicas, nil
}

// analyze runs merge on the write and recognizes a rollout undo by the
// revision it restored.
func (r *Reviewer) analyze(ctx context.Context, w write, class policy.Classification) (*policy.Input, error) {
	old, rb, err := r.undo(ctx, w)
	if err != nil {
		return nil, err
	}
	new := w.new
	// A write under a client-side applier's name that leaves last-applied
	// as it was is an apply of an unchanged manifest, unless it moves a
	// field last-applied owns away from it where kubectl's own patch for
	// that apply would not have touched the field: that is an imperative
	// edit, whatever manager it names (kubectl set image
	// --field-manager=kubectl-client-side-apply). A field the patch sets
	// or deletes is the apply's change, even when the write ends with
	// another value than last-applied's (a mutating webhook rewrote it,
	// such as one that pins an image tag to its current digest).
	if class == policy.ClientSideApply && rb == nil && w.optionsManager == merge.ClientSideApplyManager && lastApplied(w.old) == lastApplied(w.new) {
		an, err := r.analyzer.AnalyzeUpdate(old, new)
		if err != nil {
			return nil, fmt.Errorf("analyzing the %s of %s %s/%s: %w", class, new.GetKind(), new.GetNamespace(), new.GetName(), err)
		}
		if len(an.ImperativeChanges) > 0 && lastAppliedIsKubectls(w) {
			if edits := r.analyzer.LeftByReapply(old, an.ImperativeChanges); len(edits) > 0 {
				// Not an apply by what it does, whatever manager it names.
				an.ImperativeChanges = edits
				return &policy.Input{Classification: policy.Imperative, Analysis: an}, nil
			}
		}
	}
	if _, kept := new.GetAnnotations()[lastAppliedAnnotation]; class == policy.Imperative && kept {
		// An edit may change last-applied along with the field (see
		// imperativeManagers): judge it against last-applied as it was.
		// One that drops it (kubectl replace of a manifest) leaves the
		// next apply no values to put back: merge finds no imperative
		// change in it.
		new = withLastApplied(new, lastApplied(old))
	}
	an, err := r.analyzeWrite(w, class, old, new)
	if err != nil {
		return nil, err
	}
	// The analysis may have seen the objects with another last-applied
	// than the write's (an edit judged against the one it changed, an
	// undo under apply-hygiene's repair): whether the write left another
	// one is the write's own fact.
	an.LastApplied.Replaced = merge.LastAppliedReplaced(w.old, w.new)
	if handsOverThroughLastApplied(w, class) {
		an.HandOver = r.analyzer.HandOverThroughLastApplied(w.old, w.new)
	}
	if an.HandOver == nil && dropsRecord(w, class) {
		// A hand-over's record already holds the dropped record's entries.
		an.DroppedRecord = merge.RecordDroppedByApply(w.old, w.new)
	}
	if len(an.ImperativeChanges) > 0 && !lastAppliedIsKubectls(w) {
		an.ImperativeChanges = []merge.FieldFact{}
	}
	in := &policy.Input{Classification: class, Analysis: an}
	if rb != nil {
		in.Classification = policy.RolloutUndo
		an.Rollback = rb
	}
	return in, nil
}

// analyzeWrite runs the analysis that fits the classification: an apply
// is recomputed as one even when last-applied did not change (an unchanged
// manifest still reverts drift).
func (r *Reviewer) analyzeWrite(w write, class policy.Classification, old, new *unstructured.Unstructured) (*merge.Analysis, error) {
	var (
		an  *merge.Analysis
		err error
	)
	switch class {
	case policy.ServerSideApply:
		an, err = r.analyzer.AnalyzeServerSideApply(old, new, w.manager)
	case policy.ClientSideApply:
		an, err = r.analyzer.AnalyzeClientSideApply(old, new)
	default:
		an, err = r.analyzer.AnalyzeUpdate(old, new)
	}
	if err != nil {
		return nil, fmt.Errorf("analyzing the %s of %s %s/%s: %w", class, new.GetKind(), new.GetNamespace(), new.GetName(), err)
	}
	return an, nil
}

// Classification is the review's classification; "" for none.
func (rv *Review) Classification() policy.Classification {
	if rv == nil {
		return ""
	}
	return rv.Input.Classification
}

// DecisionsWith returns the decisions with one of actions.
func (rv *Review) DecisionsWith(actions ...policy.Action) []policy.Decision {
	var out []policy.Decision
	for _, d := range rv.Decisions {
		for _, a := range actions {
			if d.Action == a {
				out = append(out, d)
			}
		}
	}
	return out
}
