package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Removal proofs: would removing a field stick, or would the API server
// put the same value straight back?
//
// An orphan (a field that no manifest has and a person set) is only worth
// a warning, a remove command or a prune when removing it sticks. The
// server puts many such values straight back: a default that appeared
// because a person changed a discriminator (kubectl patch to type NodePort
// gives externalTrafficPolicy: Cluster and the node ports), a field
// derived from a sibling (a Service's clusterIPs mirror clusterIP), a
// value an allocator keeps (a Service's clusterIP and nodePort survive an
// update that leaves them out). merge's table of defaults knows some of
// them; the API server knows all of them. RemovalSticks asks it.
//
// The request is a server-side dry run (dryRun=All) of a JSON merge patch
// that turns the live object into the object after the write under review
// minus the field, on the object itself: the same namespace, the same
// admission chain (mutating webhooks and admission plugins that restore
// values), the same update path (allocated values kept, immutable fields
// refused) as the remove command the warning prints, which is what must
// stick. Nothing is stored. The alternative, a dry-run create of a copy
// minus the field in a namespace apply-hygiene owns, needs only create
// there, but answers another question: a create allocates a new clusterIP
// and new node ports (and a copy that keeps the live ones is refused as
// already allocated), runs the create path's defaults instead of the
// update path's, misses what admission does in the object's own namespace,
// and cannot hold cluster-scoped kinds; it would report the allocated
// values as orphans, the very false findings this exists to prevent. So
// the proof needs patch on the reviewed kinds (the chart grants it with
// orphanedField.dryRun, never on Secrets, whose patch response would
// carry their values): RBAC cannot limit a verb to dry runs, and
// apply-hygiene sends no other patch (but the audit's opt-in fixes).
//
// A dry run is made only for an orphan candidate that ownership and the
// table have not already ruled out, which is rare, never on a review
// without one. Verdicts are kept (removalCacheSize entries, for
// removalCacheTTL) under a key of the resource, the object as stored and
// as the write would store it, and the fields removed (removalKey): the
// server's answer depends on all of it (a volume a container mounts, a
// transition rule that reads oldSelf.status), so a verdict answers only
// the same write again, never another write of the same object. Each dry run
// has at most RemovalTimeout, and half the caller's remaining time, inside
// the webhook's budget.

// RemovalVerdict is the API server's answer to a removal's dry run.
type RemovalVerdict string

const (
	// RemovalSticks means the server stores the object without the field, or
	// with another value than the one removed.
	RemovalSticks RemovalVerdict = "sticks"
	// RemovalPutBack means the server puts the same value straight back.
	RemovalPutBack RemovalVerdict = "put_back"
	// RemovalRejected means the server refuses the object without the field
	// (any 422 Invalid), so no write can carry its removal. It is kept only
	// when a cause names the field, its parent or, for a list element, a
	// later element of its list (removal_invalid.go).
	RemovalRejected RemovalVerdict = "rejected"
)

// DryRunFieldManager is the field manager of apply-hygiene's dry runs. The
// webhook does not review its own dry runs.
const DryRunFieldManager = "apply-hygiene-dry-run"

// lastAppliedAnnotation is kubectl's last-applied-configuration.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

const (
	// RemovalTimeout bounds one removal's dry run.
	RemovalTimeout = time.Second
	// removalCacheSize and removalCacheTTL bound the verdicts kept.
	removalCacheSize = 4096
	removalCacheTTL  = 10 * time.Minute
)

// ErrNoRemovalProof marks a removal that was not tried: the object or the
// field cannot be written as a patch.
var ErrNoRemovalProof = errors.New("no removal proof")

type cachedVerdict struct {
	verdict RemovalVerdict
	fetched time.Time
}

// RemovalSticks reports what the API server does when the field at pointer
// (RFC 6901) is removed from target, the object after the write under
// review, written over live, the object as stored (see above), together
// with the fields at with (those the server would restore it from, such
// as a deprecated alias: merge.RemovedWith). gvr is the object's
// resource. An error means no verdict: the dry run was not allowed, timed
// out or failed.
func (c *Cluster) RemovalSticks(ctx context.Context, gvr schema.GroupVersionResource, live, target *unstructured.Unstructured, pointer string, with ...string) (RemovalVerdict, error) {
	if gvr.Resource == "" {
		return "", fmt.Errorf("%w: no resource for %s %s", ErrNoRemovalProof, target.GetKind(), target.GetName())
	}
	if gvr.Group == "" && gvr.Resource == "secrets" {
		// The patch and its answer would carry the Secret's values; the
		// chart grants no patch on Secrets.
		return "", fmt.Errorf("%w: Secrets are never patched", ErrNoRemovalProof)
	}
	tokens, err := pointerTokens(pointer)
	if err != nil {
		return "", err
	}
	value, ok := valueAt(target.Object, tokens)
	if !ok {
		return "", fmt.Errorf("%w: %s has no field at %s", ErrNoRemovalProof, target.GetName(), pointer)
	}
	also := make([][]string, 0, len(with))
	for _, w := range with {
		t, err := pointerTokens(w)
		if err != nil {
			return "", err
		}
		also = append(also, t)
	}
	key, err := removalKey(gvr, live, target, tokens, also)
	if err != nil {
		return "", err
	}
	if v, ok := c.cachedVerdict(key); ok {
		c.observeRemoval("cached")
		return v, nil
	}
	v, keep, err := c.dryRunRemoval(ctx, gvr, live, target, tokens, value, also)
	if err != nil {
		c.observeRemoval("error")
		return "", err
	}
	c.observeRemoval(string(v))
	if keep {
		c.keepVerdict(key, v)
	}
	return v, nil
}

// dryRunRemoval sends the dry run and reads its verdict, and whether the
// verdict may be kept for the same question.
func (c *Cluster) dryRunRemoval(ctx context.Context, gvr schema.GroupVersionResource, live, target *unstructured.Unstructured, tokens []string, value any, also [][]string) (RemovalVerdict, bool, error) {
	patch, err := removalPatch(live, target, tokens, also...)
	if err != nil {
		return "", false, err
	}
	timeout := RemovalTimeout
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline)/2 < timeout {
		timeout = time.Until(deadline) / 2
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	got, err := c.client.Resource(gvr).Namespace(live.GetNamespace()).Patch(ctx, live.GetName(), types.MergePatchType, patch,
		metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: DryRunFieldManager})
	if apierrors.IsInvalid(err) {
		// Refused with whatever write carries it: rejected, kept only
		// when the refusal is about the removal (removal_invalid.go).
		return RemovalRejected, rejectsRemoval(err, tokens), nil
	}
	if err != nil {
		return "", false, fmt.Errorf("dry-running the removal of %s from %s %s/%s: %w", pointerOf(tokens), gvr.Resource, live.GetNamespace(), live.GetName(), err)
	}
	if putBack(got.Object, tokens, value) {
		return RemovalPutBack, true, nil
	}
	return RemovalSticks, true, nil
}

// removalPatch is the JSON merge patch from live to target without the
// field at tokens (and those at also). Neither keeps what the server
// maintains (managedFields, resourceVersion, status), and target keeps
// live's last-applied: the dry run tests the removal, not a hand-over.
func removalPatch(live, target *unstructured.Unstructured, tokens []string, also ...[]string) ([]byte, error) {
	from, to := writable(live), writable(target)
	removeAt(to.Object, tokens)
	for _, t := range also {
		removeAt(to.Object, t)
	}
	annotations := to.GetAnnotations()
	if la, ok := live.GetAnnotations()[lastAppliedAnnotation]; ok {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[lastAppliedAnnotation] = la
		to.SetAnnotations(annotations)
	}
	fromJSON, err := json.Marshal(from.Object)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding %s: %w", ErrNoRemovalProof, live.GetName(), err)
	}
	toJSON, err := json.Marshal(to.Object)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding %s: %w", ErrNoRemovalProof, target.GetName(), err)
	}
	patch, err := jsonpatch.CreateMergePatch(fromJSON, toJSON)
	if err != nil {
		return nil, fmt.Errorf("%w: building the merge patch of %s: %w", ErrNoRemovalProof, live.GetName(), err)
	}
	return patch, nil
}

// writable is a copy of obj without what the server maintains.
func writable(obj *unstructured.Unstructured) *unstructured.Unstructured {
	c := obj.DeepCopy()
	delete(c.Object, "status")
	c.SetManagedFields(nil)
	c.SetResourceVersion("")
	return c
}

// putBack reports whether obj, the server's answer, has value at tokens:
// for a list element, anywhere in its list (the element removed leaves its
// index to the next one).
func putBack(obj map[string]any, tokens []string, value any) bool {
	parent, ok := valueAt(obj, tokens[:len(tokens)-1])
	if !ok {
		return false
	}
	if list, ok := parent.([]any); ok {
		for _, e := range list {
			if sameJSON(e, value) {
				return true
			}
		}
		return false
	}
	got, ok := valueAt(obj, tokens)
	return ok && sameJSON(got, value)
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

func (c *Cluster) cachedVerdict(key string) (RemovalVerdict, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.verdicts[key]
	if !ok || time.Since(e.fetched) >= removalCacheTTL {
		return "", false
	}
	return e.verdict, true
}

func (c *Cluster) keepVerdict(key string, v RemovalVerdict) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.verdicts) >= removalCacheSize {
		for k, e := range c.verdicts {
			if time.Since(e.fetched) >= removalCacheTTL {
				delete(c.verdicts, k)
			}
		}
		if len(c.verdicts) >= removalCacheSize {
			clear(c.verdicts)
		}
	}
	c.verdicts[key] = cachedVerdict{verdict: v, fetched: time.Now()}
}
