package review

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Field managers that kubectl sends; see kubectl's pkg/cmd/*/ for each.
const (
	managerRollout = "kubectl-rollout"
	managerReplace = "kubectl-replace"
)

const (
	lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
	restartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"
)

// write is what classification looks at: the request's facts, decoded.
type write struct {
	subresource string
	// optionsManager is options.fieldManager as the client sent it.
	optionsManager string
	user           authenticationv1.UserInfo
	// controllers are the user names configured as controllers' besides
	// ControllerUsers (WithControllerUsers).
	controllers map[string]bool
	old, new    *unstructured.Unstructured
	// manager and operation are effectiveManager's answer, computed once
	// by newWrite: decoding managedFields is a large part of a review.
	manager   string
	operation metav1.ManagedFieldsOperationType
}

// newWrite describes a write and works out its effective field manager.
func newWrite(subresource, optionsManager string, user authenticationv1.UserInfo, old, new *unstructured.Unstructured) write {
	w := write{subresource: subresource, optionsManager: optionsManager, user: user, old: old, new: new}
	w.manager, w.operation = w.effectiveManager()
	return w
}

// changedManager returns the managedFields entry of this write: the API
// server records it before admission, so it names the manager (even one
// derived from the user agent) and the operation. Other entries can change
// too, when the write took fields over from them; those keep their time,
// while the writer's entry is new or gets the time of the write.
// Unreadable managedFields (objectOf rejects them in a request) count
// as none.
func changedManager(old, new *unstructured.Unstructured) (merge.ManagedFieldsEntry, bool) {
	oldEntries, _ := merge.ReadManagedFields(old)
	newEntries, _ := merge.ReadManagedFields(new)
	before := make(map[string]merge.ManagedFieldsEntry, len(oldEntries))
	for _, e := range oldEntries {
		before[entryKey(e)] = e
	}
	best, bestScore := merge.ManagedFieldsEntry{}, -1
	for _, e := range newEntries {
		score := -1
		prev, ok := before[entryKey(e)]
		switch {
		case !ok:
			score = 2
		case !prev.Time.Equal(e.Time):
			score = 1
		case !equality.Semantic.DeepEqual(prev.FieldsV1, e.FieldsV1):
			score = 0
		}
		if score > bestScore {
			best, bestScore = e, score
		}
	}
	return best, bestScore >= 0
}

func entryKey(e merge.ManagedFieldsEntry) string {
	return e.Manager + "\x00" + e.Operation + "\x00" + e.Subresource
}

// effectiveManager is the field manager of the write: the one the client
// sent, else the one the server recorded for it.
func (w write) effectiveManager() (manager string, operation metav1.ManagedFieldsOperationType) {
	if w.old == nil || w.new == nil {
		return w.optionsManager, metav1.ManagedFieldsOperationUpdate
	}
	e, ok := changedManager(w.old, w.new)
	switch {
	case ok && (w.optionsManager == "" || e.Manager == w.optionsManager):
		return e.Manager, metav1.ManagedFieldsOperationType(e.Operation)
	case ok && w.optionsManager != "":
		// Another manager's entry changed and the writer's did not: the
		// write only took fields away from it (a JSON patch that removes
		// last-applied, as Flux's clean-up does, or a field another
		// manager set). A server-side apply changes its own entry, so
		// this is an Update, whatever entries the manager already has.
		return w.optionsManager, metav1.ManagedFieldsOperationUpdate
	case w.optionsManager != "" && entryRemoved(w.old, w.new):
		// The write took every field of another entry, which the API
		// server then drops: the same as above (Flux's clean-up of a
		// last-applied that only kubectl edit --save-config's entry
		// owned).
		return w.optionsManager, metav1.ManagedFieldsOperationUpdate
	case w.optionsManager != "":
		return w.optionsManager, operationOf(w.new, w.optionsManager, w.subresource)
	}
	return "", metav1.ManagedFieldsOperationUpdate
}

// entryRemoved reports whether old has a managedFields entry that new does
// not. Unreadable managedFields count as none.
func entryRemoved(old, new *unstructured.Unstructured) bool {
	oldEntries, _ := merge.ReadManagedFields(old)
	newEntries, _ := merge.ReadManagedFields(new)
	for _, e := range oldEntries {
		if !slices.ContainsFunc(newEntries, func(n merge.ManagedFieldsEntry) bool { return entryKey(n) == entryKey(e) }) {
			return true
		}
	}
	return false
}

// operationOf is the operation of manager's write when its managedFields
// entry did not change (times have whole seconds, and an apply that
// changes no field set leaves the entry as it was): Apply when obj has an
// Apply entry of manager and no Update entry.
func operationOf(obj *unstructured.Unstructured, manager, subresource string) metav1.ManagedFieldsOperationType {
	apply, update := false, false
	entries, _ := merge.ReadManagedFields(obj)
	for _, e := range entries {
		if e.Manager != manager || e.Subresource != subresource {
			continue
		}
		apply = apply || e.Operation == string(metav1.ManagedFieldsOperationApply)
		update = update || e.Operation == string(metav1.ManagedFieldsOperationUpdate)
	}
	if apply && !update {
		return metav1.ManagedFieldsOperationApply
	}
	return metav1.ManagedFieldsOperationUpdate
}

// imperativeManagers are kubectl's commands that change objects in place.
// kubectl edit opens last-applied too, and a search-and-replace in the
// editor changes it along with the field, so the manager, not the
// annotation, tells an edit from an apply (kubectl edit --save-config,
// which records the edited object itself, is a save-config: savedConfig).
var imperativeManagers = map[string]bool{
	"kubectl-edit": true, "kubectl-patch": true, "kubectl-set": true,
	"kubectl-label": true, "kubectl-annotate": true, "kubectl-scale": true,
}

// classify names the kind of write. A rollout undo is only a candidate
// here (undoCandidate): it is confirmed against the object's revisions.
func classify(w write) policy.Classification {
	manager, operation := w.manager, w.operation
	laChanged := lastApplied(w.new) != lastApplied(w.old)
	switch {
	case isController(w.user, w.controllers):
		return policy.Controller
	case w.subresource == "scale":
		return policy.Scale
	case operation == metav1.ManagedFieldsOperationApply:
		return policy.ServerSideApply
	case laChanged && lastApplied(w.new) == "":
		// A write that drops last-applied (Flux's kustomize-controller
		// before its first server-side apply, kubectl replace of a
		// manifest without it): kubectl apply and --save-config always
		// write it, so this is neither an apply nor a hand-over.
		return policy.Imperative
	case laChanged && (manager == managerReplace || savedConfig(w.old, w.new) || onlyLastAppliedChanged(w.old, w.new) && !appliedAlready(w)):
		// replace --save-config, edit --save-config, apply
		// set-last-applied and edit-last-applied: the documented hand-over
		// of fields. Not kubectl apply of a manifest the object already
		// matches, which changes last-applied alone too (see
		// lastAppliedGrew).
		return policy.SaveConfig
	case manager == merge.HandoverRecordManager && !laChanged && onlyLastAppliedChanged(w.old, w.new):
		// kubectl hygiene handover's record of the fields it hands over,
		// written right before last-applied's patch (unchanged when it
		// already names them): the hand-over's first half.
		return policy.SaveConfig
	case manager == merge.ClientSideApplyManager && w.optionsManager != "" && lastApplied(w.new) != "":
		// Also when last-applied stays the same: an apply of an unchanged
		// manifest still patches what drifted. kubectl apply always
		// writes last-applied: a write under its name that leaves none
		// (kubectl set image --field-manager=kubectl-client-side-apply on
		// an object without one) is no apply. kubectl apply always sends
		// its manager: a write without one whose only changed
		// managedFields entry is the applier's (it lost the fields a
		// rollout undo took back) is not an apply either.
		return policy.ClientSideApply
	case imperativeManagers[manager]:
		return policy.Imperative
	case laChanged:
		return policy.ClientSideApply
	case manager == managerRollout && restartedAt(w.new) != restartedAt(w.old):
		return policy.RolloutRestart
	}
	return policy.Imperative
}

// savedConfig reports whether obj's last-applied is what kubectl's
// --save-config records (CreateApplyAnnotation in
// k8s.io/kubectl/pkg/util/apply.go): the object as kubectl sent it, less
// the annotation. kubectl edit --save-config sends the object it read
// and the person edited, so that last-applied carries the object's own
// uid, which no manifest has, and every one of its fields has the value
// the write left in obj (the server adds defaults, never changes a value
// sent; what it maintains, resourceVersion, generation, managedFields,
// status and a DaemonSet's template generation annotation, may differ). A search-and-replace in kubectl edit that changes
// a value in last-applied along with the field leaves the manifest
// without uid: that is an edit. kubectl records the resourceVersion it
// read, which every write since the last record has moved on: a record
// with the same resourceVersion as old's record is that earlier record of
// an earlier kubectl edit --save-config, changed by a later plain kubectl
// edit along with the field, and that write is an edit. (Not old's own
// resourceVersion: kubectl edit sends no precondition on it, so a status
// or controller write while the editor was open moves old past the one
// recorded.)
func savedConfig(old, obj *unstructured.Unstructured) bool {
	raw := lastApplied(obj)
	if !mayHoldUID(raw, string(obj.GetUID())) {
		return false
	}
	return savedConfigDecoded(old, obj, raw)
}

// recordedVersion is the resourceVersion that obj's last-applied
// records, "" when it records none (a manifest) or cannot be read.
func recordedVersion(obj *unstructured.Unstructured) string {
	var la struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(lastApplied(obj)), &la) != nil {
		return ""
	}
	return la.Metadata.ResourceVersion
}

// mayHoldUID reports whether the JSON raw may hold the string uid: false
// only when it cannot. Without a backslash (no escapes) and in valid
// UTF-8 (nothing replaced), every string decodes to the bytes written, so
// a raw that does not contain uid quoted holds no string equal to it. An
// empty uid is held by no saved config (savedConfigDecoded).
func mayHoldUID(raw, uid string) bool {
	if uid == "" {
		return false
	}
	return strings.Contains(raw, `\`) || !utf8.ValidString(raw) || strings.Contains(raw, `"`+uid+`"`)
}

// savedConfigDecoded is savedConfig on the decoded last-applied raw.
func savedConfigDecoded(old, obj *unstructured.Unstructured, raw string) bool {
	var saved map[string]any
	if err := json.Unmarshal([]byte(raw), &saved); err != nil {
		return false
	}
	meta, _ := saved["metadata"].(map[string]any)
	if uid, _ := meta["uid"].(string); uid == "" || uid != string(obj.GetUID()) {
		return false
	}
	if rv, _ := meta["resourceVersion"].(string); rv != "" && rv == recordedVersion(old) {
		return false
	}
	objMeta, _ := obj.Object["metadata"].(map[string]any)
	savedAnnotations, _ := meta["annotations"].(map[string]any)
	objAnnotations, _ := objMeta["annotations"].(map[string]any)
	return subsetExcept(saved, obj.Object, "status", "metadata") &&
		subsetExcept(meta, objMeta, "resourceVersion", "generation", "managedFields", "annotations") &&
		subsetExcept(savedAnnotations, objAnnotations, append(stampedAnnotations(old, obj, savedAnnotations, objAnnotations), merge.DaemonSetGenerationAnnotation)...)
}

// stampedAnnotations are the annotations of saved that obj has with
// another value that a mutating webhook changed (a mesh injector stamping
// every write): no entry of obj owns them, or their managedFields owners
// are old's, times included (merge.ChangedByAdmission; kubectl rollout
// undo's entry owns a stamp it copied), since the API server tracks a
// write's fields before mutating admission, so after kubectl recorded the
// object it sent. None when obj has no managedFields: then nothing tells
// who changed them.
func stampedAnnotations(old, obj *unstructured.Unstructured, saved, objAnnotations map[string]any) []string {
	entries, err := merge.ReadManagedFields(obj)
	if err != nil || len(entries) == 0 {
		return nil
	}
	var out []string
	for k, v := range saved {
		if ov, ok := objAnnotations[k]; !ok || merge.FieldsWithin(v, ov) {
			continue
		}
		if !ownedIn(entries, k) {
			out = append(out, k)
			continue
		}
		if annotationStamped(old, obj, k) {
			out = append(out, k)
		}
	}
	return out
}

// ownedIn reports whether one of entries owns the annotation k.
func ownedIn(entries []merge.ManagedFieldsEntry, k string) bool {
	return slices.ContainsFunc(entries, func(e merge.ManagedFieldsEntry) bool {
		meta, _ := e.FieldsV1["f:metadata"].(map[string]any)
		annotations, _ := meta["f:annotations"].(map[string]any)
		_, ok := annotations["f:"+k]
		return ok
	})
}

// subsetExcept reports whether every field of sub but the keys skip has
// the same value in obj (merge.FieldsWithin: maps recursively, obj may
// have more keys, the server's defaults; lists element by element; numbers
// by value).
func subsetExcept(sub, obj map[string]any, skip ...string) bool {
	for k, v := range sub {
		if slices.Contains(skip, k) {
			continue
		}
		ov, ok := obj[k]
		if !ok || !merge.FieldsWithin(v, ov) {
			return false
		}
	}
	return true
}

// lastAppliedIsKubectls reports whether the last-applied of w's old
// object proves what kubectl apply owns, for this write. managedFields
// tells who wrote the annotation: not when every writer is this write's
// own manager and that is not one of kubectl's, so that the write moves
// fields away from a last-applied its own tool wrote (data in that tool's
// manifest, such as a Helm chart's template copied from kubectl get -o
// yaml, which helm upgrade carries unchanged; never kubectl apply's
// record). When nobody owns it (managedFields reset or stripped) it is
// kubectl's, as before managedFields existed.
func lastAppliedIsKubectls(w write) bool {
	writers := merge.LastAppliedWriters(w.old)
	if len(writers) == 0 {
		return true
	}
	for _, m := range writers {
		if m != w.manager || merge.IsKubectlManager(m) {
			return true
		}
	}
	return false
}

// undoCandidate reports whether the write may be a rollout undo: kubectl
// sends no field manager for it, and it replaces the pod template. A
// candidate is an undo when its template equals a revision (the reviewer
// checks), and an unconfirmed undo when it is undoLike or, under any
// manager's name, undoDroppingFields.
func undoCandidate(w write) bool {
	if w.optionsManager != "" || w.subresource != "" || w.old == nil || w.new == nil {
		return false
	}
	oldTemplate, _, _ := unstructured.NestedFieldNoCopy(w.old.Object, "spec", "template")
	newTemplate, _, _ := unstructured.NestedFieldNoCopy(w.new.Object, "spec", "template")
	return newTemplate != nil && !equality.Semantic.DeepEqual(oldTemplate, newTemplate)
}

// undoLike reports whether w looks like kubectl rollout undo, whether or
// not its template matches a revision: an Update without field manager by
// kubectl, or by oc, which builds kubectl's undo in
// (merge.MayBeUndoManager), that replaces the pod template, leaves
// last-applied as it was, and changes nothing else but what the server
// maintains and, for a Deployment, the annotations that kubectl restores from the ReplicaSet
// (k8s.io/kubectl/pkg/polymorphichelpers/rollback.go patches
// /spec/template and /metadata/annotations; for a StatefulSet or DaemonSet
// it patches spec.template only).
func undoLike(w write) bool {
	return undoCandidate(w) && (merge.MayBeUndoManager(w.manager) || hasUndoEntry(w.new) && !entryMoved(w)) && undoShaped(w)
}

// undoShaped reports whether w writes what a rollout undo writes, whoever
// sent it: an Update that leaves last-applied as it was and changes
// nothing but the template and what an undo restores (onlyTemplateChanged).
func undoShaped(w write) bool {
	return w.operation == metav1.ManagedFieldsOperationUpdate && lastApplied(w.old) == lastApplied(w.new) && onlyTemplateChanged(w.old, w.new)
}

// hasUndoEntry reports whether obj has an Update entry of kubectl or oc
// without field manager (merge.MayBeUndoEntry). A rollout undo that
// restores fields this entry already owns leaves it as it was; the entries
// that change are those that lose the restored fields (kubectl apply's),
// so the write's effective manager names one of those instead. Such an
// entry is not only an undo's (kubectl apply set-last-applied writes under
// kubectl too, and an undo's stays after it): undoLike reads it only when
// the write's own entry did not move (entryMoved).
func hasUndoEntry(obj *unstructured.Unstructured) bool {
	entries, _ := merge.ReadManagedFields(obj)
	for _, e := range entries {
		if merge.MayBeUndoEntry(e.Owner) {
			return true
		}
	}
	return false
}

// entryMoved reports whether w's effective manager has an entry in new
// that old lacks or that has another time there: the API server moves the
// time of the entry of the manager whose write changes a field, so that
// manager wrote w, under its own name (the Python client, a controller
// without field manager). An entry that kept its time only lost fields to
// w. Unreadable managedFields count as none.
func entryMoved(w write) bool {
	oldEntries, _ := merge.ReadManagedFields(w.old)
	newEntries, _ := merge.ReadManagedFields(w.new)
	for _, e := range newEntries {
		if e.Manager != w.manager || e.Operation != string(w.operation) || e.Subresource != w.subresource {
			continue
		}
		i := slices.IndexFunc(oldEntries, func(o merge.ManagedFieldsEntry) bool { return entryKey(o) == entryKey(e) })
		return i < 0 || !oldEntries[i].Time.Equal(e.Time)
	}
	return false
}

// onlyTemplateChanged reports whether old and new differ in nothing but
// spec.template, the metadata the server maintains (a DaemonSet's
// template generation annotation among it: the API server bumps it in the
// write that changes the template, before the validating webhook sees
// it), annotations another mutating webhook re-stamped (restamped) and,
// for a Deployment, metadata.annotations. It compares in place, as
// onlyLastAppliedChanged.
func onlyTemplateChanged(old, new *unstructured.Unstructured) bool {
	oldMeta, _ := old.Object["metadata"].(map[string]any)
	newMeta, _ := new.Object["metadata"].(map[string]any)
	oldSpec, _ := old.Object["spec"].(map[string]any)
	newSpec, _ := new.Object["spec"].(map[string]any)
	if !equalExcept(old.Object, new.Object, "metadata", "spec", "status") ||
		!equalExcept(oldSpec, newSpec, "template") ||
		!equalExcept(oldMeta, newMeta, "managedFields", "resourceVersion", "generation", "annotations") {
		return false
	}
	return new.GetKind() == "Deployment" || annotationsEqualExcept(old, new, merge.DaemonSetGenerationAnnotation)
}

// isServiceAccount reports whether user is a service account.
func isServiceAccount(user authenticationv1.UserInfo) bool {
	return strings.HasPrefix(user.Username, "system:serviceaccount:")
}

func lastApplied(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	return obj.GetAnnotations()[lastAppliedAnnotation]
}

func restartedAt(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "metadata", "annotations", restartedAtAnnotation)
	return v
}

// onlyLastAppliedChanged reports whether the write changed nothing but the
// last-applied annotation (and what the server maintains), as
// `kubectl apply set-last-applied` and `edit-last-applied` do, and
// `kubectl hygiene handover` with its record (merge.HandedOverAnnotation). An
// annotation that another mutating webhook changed after the API server
// tracked the write (restamped) is not the write's change either: a mesh
// injector that stamps every write does not make a hand-over an apply,
// even when the writer's own entry owns the stamp
// (stampedBesideLastApplied). It compares in place, level by level,
// without copying either object.
func onlyLastAppliedChanged(old, new *unstructured.Unstructured) bool {
	oldMeta, _ := old.Object["metadata"].(map[string]any)
	newMeta, _ := new.Object["metadata"].(map[string]any)
	return equalExcept(old.Object, new.Object, "metadata", "status") &&
		equalExcept(oldMeta, newMeta, "annotations", "managedFields", "resourceVersion", "generation") &&
		annotationsEqualBut(old, new, stampedBesideLastApplied, lastAppliedAnnotation, merge.HandedOverAnnotation)
}

// annotationsEqualExcept reports whether old's and new's annotations are
// equal but for skip and those another mutating webhook re-stamped
// (restamped with annotationStamped), which it reads (managedFields) only
// when the others differ.
func annotationsEqualExcept(old, new *unstructured.Unstructured, skip ...string) bool {
	return annotationsEqualBut(old, new, annotationStamped, skip...)
}

// annotationsEqualBut reports whether old's and new's annotations are
// equal but for skip and those that stamped says a mutating webhook
// re-stamped (restamped), asked only when the others differ.
func annotationsEqualBut(old, new *unstructured.Unstructured, stamped func(old, new *unstructured.Unstructured, k string) bool, skip ...string) bool {
	oldMeta, _ := old.Object["metadata"].(map[string]any)
	newMeta, _ := new.Object["metadata"].(map[string]any)
	oldAnn, _ := oldMeta["annotations"].(map[string]any)
	newAnn, _ := newMeta["annotations"].(map[string]any)
	return equalExcept(oldAnn, newAnn, skip...) ||
		equalExcept(oldAnn, newAnn, append(restamped(old, new, oldAnn, newAnn, stamped), skip...)...)
}

// restamped are the annotations that old and new both have, with other
// values, that stamped says a mutating webhook changed after the API
// server tracked the write's fields (annotationStamped:
// merge.ChangedByAdmission); none without managedFields.
func restamped(old, new *unstructured.Unstructured, oldAnn, newAnn map[string]any, stamped func(old, new *unstructured.Unstructured, k string) bool) []string {
	var out []string
	for k, v := range newAnn {
		if ov, ok := oldAnn[k]; !ok || k == lastAppliedAnnotation || equality.Semantic.DeepEqual(ov, v) {
			continue
		}
		if stamped(old, new, k) {
			out = append(out, k)
		}
	}
	return out
}

// annotationStamped reports whether a mutating webhook, not the writer,
// changed annotation k from old to new (merge.ChangedByAdmission).
func annotationStamped(old, new *unstructured.Unstructured, k string) bool {
	p, err := merge.ParsePath("metadata.annotations[" + k + "]")
	if err != nil {
		return false
	}
	stamped, err := merge.ChangedByAdmission(old, new, p)
	return err == nil && stamped
}

// equalExcept reports whether a and b are equal but for the keys skip. A
// nil map equals an empty one.
func equalExcept(a, b map[string]any, skip ...string) bool {
	count := func(m map[string]any) int {
		n := len(m)
		for _, k := range skip {
			if _, ok := m[k]; ok {
				n--
			}
		}
		return n
	}
	if count(a) != count(b) {
		return false
	}
	for k, av := range a {
		if slices.Contains(skip, k) {
			continue
		}
		bv, ok := b[k]
		if !ok || !equality.Semantic.DeepEqual(av, bv) {
			return false
		}
	}
	return true
}

// fieldManagerOption reads options.fieldManager from the request's raw
// UpdateOptions or PatchOptions; "" when absent or unreadable.
func fieldManagerOption(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var opts struct {
		FieldManager string `json:"fieldManager"`
	}
	if err := json.Unmarshal(raw, &opts); err != nil {
		return ""
	}
	return opts.FieldManager
}

// appliedAlready reports whether w is a kubectl apply of a manifest the
// object already matched (see lastAppliedGrew).
func appliedAlready(w write) bool {
	return w.manager == merge.ClientSideApplyManager && lastAppliedGrew(w.old, w.new)
}

// lastAppliedGrew reports whether new's last-applied keeps every field of
// old's, or old has none: what kubectl apply records when it changes
// nothing but last-applied (the object already had the manifest's values,
// such as after a server-side apply or Flux's last-applied clean-up, or a
// manifest that adds replicas: 1 to a Deployment at 1). kubectl apply
// edit-last-applied, under the same field manager, hands a field over by
// deleting it from last-applied alone, where an apply would delete it from
// the object too. Unreadable JSON: false.
func lastAppliedGrew(old, new *unstructured.Unstructured) bool {
	before := lastApplied(old)
	if before == "" {
		return true
	}
	var o, n map[string]any
	if json.Unmarshal([]byte(before), &o) != nil || json.Unmarshal([]byte(lastApplied(new)), &n) != nil {
		return false
	}
	return keepsFields(o, n)
}

// keepsFields reports whether every field of o, nested maps followed, is
// in n; values count as one field each, and so do lists, except that an
// element of a list of objects that names itself (elementKeys) is
// followed into the element of n that has the same name (kubectl hygiene
// handover of a container's image deletes a field inside the element).
func keepsFields(o, n map[string]any) bool {
	for k, ov := range o {
		nv, ok := n[k]
		if !ok {
			return false
		}
		switch ov := ov.(type) {
		case map[string]any:
			nm, ok := nv.(map[string]any)
			if !ok || !keepsFields(ov, nm) {
				return false
			}
		case []any:
			nl, ok := nv.([]any)
			if !ok || !keepsElements(ov, nl) {
				return false
			}
		}
	}
	return true
}

// elementKeys are the fields by which the elements of the built-in kinds'
// lists of objects name themselves (their merge keys): containers,
// volumes, env, container and Service ports, mounts, tolerations' keys. A
// Service's single port usually has no name: its port names it.
var elementKeys = []string{"name", "containerPort", "port", "mountPath", "devicePath", "key", "ip"}

// keepsElements reports whether every element of o that names itself
// (elementKeys) has its fields kept by an element of n with the same
// names: every one of elementKeys that the element has, equal (volume
// mounts share a volume's name and differ in mountPath). An element of n
// missing is a field gone. Other elements count as part of the list, one
// field.
func keepsElements(o, n []any) bool {
	for _, oe := range o {
		om, ok := oe.(map[string]any)
		if !ok || !named(om) {
			continue
		}
		kept := false
		for _, ne := range n {
			if nm, ok := ne.(map[string]any); ok && sameNames(om, nm) && keepsFields(om, nm) {
				kept = true
				break
			}
		}
		if !kept {
			return false
		}
	}
	return true
}

// named reports whether e has one of elementKeys.
func named(e map[string]any) bool {
	for _, k := range elementKeys {
		if _, ok := e[k]; ok {
			return true
		}
	}
	return false
}

// sameNames reports whether n has every one of elementKeys that o has,
// with the same value.
func sameNames(o, n map[string]any) bool {
	for _, k := range elementKeys {
		if v, ok := o[k]; ok && !reflect.DeepEqual(v, n[k]) {
			return false
		}
	}
	return true
}
