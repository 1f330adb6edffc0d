package merge

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// podTemplateHashLabel is the label that the Deployment controller adds to
// the template of each ReplicaSet; `rollout undo` removes it.
const podTemplateHashLabel = "pod-template-hash"

// replicaSetKeys are the template label and the annotations with which a
// controller marks the ReplicaSets it makes for an object: the label that
// the object's undo removes from the template it restores, the revision
// number, and the numbers the ReplicaSet had before an undo renumbered it.
type replicaSetKeys struct {
	hashLabel, revision, history string
}

// deploymentKeys are the Deployment controller's.
var deploymentKeys = replicaSetKeys{podTemplateHashLabel, deploymentRevisionAnnotation, revisionHistoryAnnotation}

// rolloutKeys are Argo Rollouts' (argoproj.io Rollout; its
// DefaultRolloutUniqueLabelKey and utils/annotations), which `kubectl argo
// rollouts undo` removes and reads the same way.
var rolloutKeys = replicaSetKeys{"rollouts-pod-template-hash", "rollout.argoproj.io/revision", "rollout.argoproj.io/revision-history"}

// revision is a pod template that an object owned at some point.
type revision struct {
	kind, name string
	// number is the revision's current number; first, for a ReplicaSet,
	// the one it was created with (a restored ReplicaSet is renumbered).
	number, first int64
	template      any
	// numbers are every number it has had (a restored ReplicaSet keeps
	// the earlier ones in its revision-history annotation).
	numbers     []int64
	created     time.Time
	lastApplied string
}

// DetectRollback reports whether the write that turned old into new is a
// rollout undo: the pod template changed, last-applied did not, and the new
// template equals one of revisions (the object's ReplicaSets or
// ControllerRevisions, as stored). It returns nil when it is not. For an
// undo it also computes the last-applied that matches the restored
// template: the old last-applied with the fields that the undo restored
// (the pod template; a Deployment's annotations) changed where their
// restored values are proven a manifest's, by the manifest the
// ControllerRevision kept in its annotations (StatefulSet, DaemonSet) when
// that one matches the template, else by managedFields and the revisions
// (always for a Deployment: ReplicaSets never carry last-applied). See
// undoProof. The undo of another kind to one of its ReplicaSets (an Argo
// Rollout's, read by rolloutKeys) is confirmed the same way but never
// repaired (see repair).
func (a *Analyzer) DetectRollback(old, new *unstructured.Unstructured, revisions []*unstructured.Unstructured) (*Rollback, error) {
	tplPath := Path{fieldName("spec"), fieldName("template")}
	oldT, newT := at(old.Object, tplPath), at(new.Object, tplPath)
	if !newT.ok || jsonEqual(stripNulls(oldT.v), stripNulls(newT.v)) {
		return nil, nil
	}
	if old.GetAnnotations()[LastAppliedAnnotation] != new.GetAnnotations()[LastAppliedAnnotation] {
		return nil, nil
	}
	rev, ok := matchRevision(new, newT.v, revisions)
	if !ok {
		return nil, nil
	}
	rb := &Rollback{RevisionKind: rev.kind, RevisionName: rev.name, Revision: rev.number, Confirmed: true}
	changes, err := a.undoChanges(old, new)
	if err != nil {
		return nil, err
	}
	rb.Changes = changes
	// Without a usable last-applied there is nothing to repair.
	if original, _, err := a.parseLastApplied(old); err == nil {
		if err := a.repair(rb, rev, old, new, original, revisions); err != nil {
			return nil, err
		}
	}
	written := "" // the repair writes last-applied only when it is stale
	if rb.StaleLastApplied {
		written = rb.RepairedLastApplied
	}
	rb.DroppedRecord = droppedRecord(old, new, written)
	return rb, nil
}

// UnconfirmedRollback describes a write that looks like a rollout undo but
// whose pod template equals none of the object's revisions, so the revision
// it restored is not proven: another mutating webhook changed the template
// in the same request, the revision was written before the server added
// a default that the restored template now has, or an older kubectl
// dropped the template fields it does not know (RestoresRevisionLessFields).
// It names no revision and has no repair (Confirmed and StaleLastApplied
// are false); Changes lists the template fields that the write changed.
// Whether the write looks like an undo is the caller's judgement:
// UnconfirmedRollback only checks that the template changed.
func (a *Analyzer) UnconfirmedRollback(old, new *unstructured.Unstructured) (*Rollback, error) {
	changes, err := a.undoChanges(old, new)
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return nil, nil
	}
	return &Rollback{Changes: changes, DroppedRecord: droppedRecord(old, new, "")}, nil
}

// undoChanges lists the template fields that the write changed.
func (a *Analyzer) undoChanges(old, new *unstructured.Unstructured) ([]FieldFact, error) {
	return orValidated(a, func(a *Analyzer) ([]FieldFact, error) {
		return a.templateChanges(old, new)
	})
}

// repair computes the last-applied that matches the restored template,
// changing only what the undo restored and only what it proves (see
// undoProof).
func (a *Analyzer) repair(rb *Rollback, rev revision, old, new, original *unstructured.Unstructured, revisions []*unstructured.Unstructured) error {
	changes, err := a.restoredPaths(old, new)
	if err != nil {
		return err
	}
	revs := revisionsOf(revisions, new)
	pr, err := a.newUndoProof(rev, revs, old, new, original, changes)
	if err != nil {
		return err
	}
	repaired := pr.repairedLastApplied(changes)
	raw, err := json.Marshal(repaired)
	if err != nil {
		return fmt.Errorf("encoding repaired last-applied: %w", err)
	}
	rb.StaleLastApplied = !jsonEqual(repaired, original.Object)
	if !keepsOwnersTemplate(rev, new) {
		// `kubectl argo rollouts undo` copies back all that the
		// ReplicaSet's template holds, so a restored value proves no
		// manifest's: last-applied stays as it was, and the rule warns
		// when it is stale.
		return nil
	}
	value := string(raw) + "\n"
	if !fitsAnnotations(new, value) {
		// Written, it would have the API server refuse the undo itself,
		// which validates the object after the mutating webhooks
		// ("metadata.annotations: Too long"), and the audit's fix
		// likewise: last-applied stays stale, and the rule warns.
		return nil
	}
	rb.RepairSource, rb.RepairedLastApplied = "rebuilt", value
	if pr.manifest != nil {
		rb.RepairSource = "controllerRevision"
	}
	return nil
}

// fitsAnnotations reports whether obj's annotations, with lastApplied as
// the last-applied annotation's value, stay within AnnotationsLimit.
func fitsAnnotations(obj *unstructured.Unstructured, lastApplied string) bool {
	return annotationsFit(obj, map[string]string{LastAppliedAnnotation: lastApplied})
}

// annotationsFit reports whether obj's annotations, with each key of set
// given its value there, stay within AnnotationsLimit.
func annotationsFit(obj *unstructured.Unstructured, set map[string]string) bool {
	return annotationsSizeWith(obj, set) <= AnnotationsLimit
}

// annotationsSizeWith is AnnotationsSize of obj with each key of set given
// its value there.
func annotationsSizeWith(obj *unstructured.Unstructured, set map[string]string) int {
	size := AnnotationsSize(obj)
	for k, v := range set {
		size += len(v)
		if cur, ok := obj.GetAnnotations()[k]; ok {
			size -= len(cur)
		} else {
			size += len(k)
		}
	}
	return size
}

// restoredPaths lists what the undo from old to new changed among what an
// undo restores: the pod template, and a Deployment's annotations (kubectl
// copies the ReplicaSet's), without the ones apply and the controller
// keep (last-applied, the revision).
func (a *Analyzer) restoredPaths(old, new *unstructured.Unstructured) ([]Path, error) {
	cmp, err := a.compareStored(old, new)
	if err != nil {
		return nil, err
	}
	var out []Path
	for _, p := range units(cmp.Modified.Union(cmp.Removed).Union(cmp.Added)) {
		annotation := isAppsDeployment(new) && len(p) == 3 && patternOf(p[:2]) == "metadata.annotations" && !serverManaged(p)
		if isTemplatePath(p) || annotation {
			out = append(out, p)
		}
	}
	return out, nil
}

// keepsOwnersTemplate reports whether rev's template is owner's pod
// template as it was: a ControllerRevision's, or an apps Deployment's
// ReplicaSet's less its hash label. Another kind's ReplicaSet (an Argo
// Rollout's, or a custom kind's that is named Deployment) also holds what its controller and the API server added:
// ephemeral canary or stable labels and annotations, the anti-affinity of
// the strategy's antiAffinity, and the pod defaults of a built-in kind,
// which a custom resource's template does not get. Such a revision is
// matched only exactly (an undo copies all of it back), never by the undo
// shapes of older clients, and proves no manifest's value for a repair.
func keepsOwnersTemplate(rev revision, owner *unstructured.Unstructured) bool {
	return rev.kind != "ReplicaSet" || isAppsDeployment(owner)
}

// isAppsDeployment reports whether obj is a Deployment of the apps group
// (or of extensions, where it was before): its kind's name alone does not
// say, as a custom resource may be named Deployment too.
func isAppsDeployment(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Kind == "Deployment" && sameOrMovedGroup(gvk.Kind, gvk.Group, "apps")
}

// revisionsOf returns the revisions among rs that owner owns.
func revisionsOf(rs []*unstructured.Unstructured, owner *unstructured.Unstructured) []revision {
	var out []revision
	for _, r := range rs {
		if rev, ok := revisionOf(r); ok && ownedBy(r, owner) {
			out = append(out, rev)
		}
	}
	return out
}

func matchRevision(owner *unstructured.Unstructured, template any, revisions []*unstructured.Unstructured) (revision, bool) {
	want := stripNulls(template)
	for _, r := range revisions {
		rev, ok := revisionOf(r)
		if !ok || !ownedBy(r, owner) {
			continue
		}
		if jsonEqual(stripNulls(rev.template), want) {
			return rev, true
		}
	}
	return revision{}, false
}

// ownedBy reports whether r names owner among its owner references; a
// revision without owner references or an owner without a UID is accepted.
func ownedBy(r, owner *unstructured.Unstructured) bool {
	refs := r.GetOwnerReferences()
	if len(refs) == 0 || owner.GetUID() == "" {
		return true
	}
	for _, ref := range refs {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

func revisionOf(r *unstructured.Unstructured) (revision, bool) {
	rev := revision{kind: r.GetKind(), name: r.GetName(), created: r.GetCreationTimestamp().Time}
	switch r.GetKind() {
	case "ReplicaSet":
		tpl, ok := at(r.Object, Path{fieldName("spec"), fieldName("template")}).v.(map[string]any)
		if !ok {
			return rev, false
		}
		keys := deploymentKeys
		if rolloutReplicaSet(r) {
			keys = rolloutKeys
		}
		tpl = runtimeDeepCopy(tpl)
		unstructured.RemoveNestedField(tpl, "metadata", "labels", keys.hashLabel)
		rev.template = tpl
		fmt.Sscan(r.GetAnnotations()[keys.revision], &rev.number) //nolint:errcheck // 0 when absent
		rev.first = firstNumber(r.GetAnnotations(), keys)
		rev.numbers = numbersOf(r.GetAnnotations(), keys)
	case "ControllerRevision":
		tpl, ok := at(r.Object, Path{fieldName("data"), fieldName("spec"), fieldName("template")}).v.(map[string]any)
		if !ok {
			return rev, false
		}
		tpl = runtimeDeepCopy(tpl)
		delete(tpl, "$patch")
		rev.template = tpl
		rev.number, _, _ = unstructured.NestedInt64(r.Object, "revision")
		if f, ok := r.Object["revision"].(float64); ok {
			rev.number = int64(f)
		}
		rev.first = rev.number
		rev.numbers = []int64{rev.number}
		rev.lastApplied = r.GetAnnotations()[LastAppliedAnnotation]
	default:
		return rev, false
	}
	return rev, true
}

// rolloutReplicaSet reports whether r, a ReplicaSet, is controlled by an
// Argo Rollout (an argoproj.io Rollout is its controller owner reference):
// its template carries rolloutKeys' hash label and its numbers rolloutKeys'
// annotations. Every other ReplicaSet is read as a Deployment's.
func rolloutReplicaSet(r *unstructured.Unstructured) bool {
	for _, ref := range r.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			return err == nil && gv.Group == "argoproj.io" && ref.Kind == "Rollout"
		}
	}
	return false
}

func runtimeDeepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

// stripNulls returns v without null map entries (creationTimestamp: null).
func stripNulls(v any) any { return CopyWithout(v, isNull) }

func isNull(v any) bool { return v == nil }

// matchesTemplate reports whether the last-applied kept in a revision
// describes obj and every field of its pod template has obj's value. An
// atomic value (a fieldRef) is compared whole, so inside it obj may also
// have what the API server defaults there (heldWithDefaults).
func (a *Analyzer) matchesTemplate(raw string, obj *unstructured.Unstructured) bool {
	probe := withLastAppliedValue(obj, raw)
	la, err := ParseLastApplied(probe)
	if err != nil {
		return false
	}
	tvs, err := a.fieldSets(written(la.Object), written(obj.Object))
	if err != nil {
		return false
	}
	set, err := tvs[0].ToFieldSet()
	if err != nil {
		return false
	}
	ok := true
	set.Leaves().Iterate(func(fp fieldpath.Path) {
		p := Path(fp)
		if len(p) > 2 && patternOf(p[:2]) == "spec.template" && !heldWithDefaults(obj.Object, p, at(la.Object, p), at(obj.Object, p)) {
			ok = false
		}
	})
	return ok
}

// heldWithDefaults reports whether obj holds the manifest's value m at p
// as live: the same value, or a map (or a list of them, element by
// element) with m's fields and besides them only fields at their server
// default (IsServerDefault): kubectl apply sends an atomic value whole and
// the API server defaults inside it (a fieldRef's apiVersion), so the
// stored value of the manifest's own field has more than the manifest.
func heldWithDefaults(obj map[string]any, p Path, m, live presence) bool {
	if same(m, live) {
		return true
	}
	return m.ok && live.ok && withDefaultsAt(obj, p, m.v, live.v)
}

// withDefaultsAt is heldWithDefaults on the values m and live at p.
func withDefaultsAt(obj map[string]any, p Path, m, live any) bool {
	switch mv := m.(type) {
	case map[string]any:
		lv, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range lv {
			q := pathTo(p, fieldName(k))
			if mw, has := mv[k]; has && !withDefaultsAt(obj, q, mw, v) || !has && !IsServerDefault(obj, q) {
				return false
			}
		}
		return subsetKeys(mv, lv)
	case []any:
		lv, ok := live.([]any)
		if !ok || len(lv) != len(mv) {
			return false
		}
		for i := range mv {
			if !withDefaultsAt(obj, pathTo(p, fieldpath.PathElement{Index: &i}), mv[i], lv[i]) {
				return false
			}
		}
		return true
	}
	return sameAt(p, presence{v: m, ok: true}, presence{v: live, ok: true})
}

// pathTo is p followed by pe, in a new slice.
func pathTo(p Path, pe fieldpath.PathElement) Path {
	return append(p[:len(p):len(p)], pe)
}

// subsetKeys reports whether every key of a is in b.
func subsetKeys(a, b map[string]any) bool {
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func (a *Analyzer) templateChanges(old, new *unstructured.Unstructured) ([]FieldFact, error) {
	cmp, err := a.compareStored(old, new)
	if err != nil {
		return nil, err
	}
	out := []FieldFact{}
	kind := new.GetKind()
	for _, p := range units(cmp.Modified.Union(cmp.Removed).Union(cmp.Added)) {
		if len(p) < 2 || patternOf(p[:2]) != "spec.template" {
			continue
		}
		out = append(out, a.fact(kind, p, factValues{live: at(old.Object, p), result: at(new.Object, p)}, nil))
	}
	return out, nil
}
