package merge

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ObjectRef names an object.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// RefOf returns the reference of obj.
func RefOf(obj *unstructured.Unstructured) ObjectRef {
	return ObjectRef{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// FieldFact is a fact about one field. Values are decoded JSON; long
// strings are cut, and a Secret's data is replaced by "<redacted>". A value
// that is left out means the field is absent there.
type FieldFact struct {
	// Path is the field, in kubectl's notation.
	Path Path `json:"path"`
	// Live is the live value before the write.
	Live any `json:"live,omitempty"`
	// Result is the value after the write (the apply or the request).
	Result any `json:"result,omitempty"`
	// LastApplied is the value in the last-applied annotation before the write.
	LastApplied any `json:"lastApplied,omitempty"`
	// Manifest is the value in the new manifest.
	Manifest any `json:"manifest,omitempty"`
	// Owners are the field managers owning the field, newest first.
	Owners []Owner `json:"owners,omitempty"`
	// DependsOn, for a defaulted dependent, is the field whose new value
	// makes this one stale.
	DependsOn Path `json:"dependsOn,omitempty"`
	// Rejected, for a defaulted dependent, is set when the API server
	// rejects the object while the field stays.
	Rejected bool `json:"rejected,omitempty"`
	// RemovePatch, for an orphan still present after the write, is the JSON
	// patch (RFC 6902, for kubectl patch --type=json) that removes it,
	// guarded by test operations that come first: each keyed list element
	// on the way, the enclosing ones included, is tested by its merge key,
	// any other field by its value, a Secret's values never.
	RemovePatch string `json:"removePatch,omitempty"`
	// Pointer, for an orphan or a defaulted dependent still present after
	// the write, is the RFC 6901 pointer to the field in the object after
	// the write, list elements resolved to their index there: a rule's
	// remedy (its decision's patch) removes the field with it.
	Pointer string `json:"pointer,omitempty"`
	// RemovedWith, for a fact with a Pointer, are the RFC 6901 pointers
	// (into the same object, resolved the same way) of the fields that a
	// removal of the field must remove too, or the API server puts it
	// back from them: a built-in pod spec's deprecated serviceAccount
	// that copies its serviceAccountName (RemovedWith). A rule's remedy
	// removes them after the field.
	RemovedWith []string `json:"removedWith,omitempty"`
	// Frozen is true for a field of the object after the write whose
	// removal the API server refuses while the object exists (a Pod's
	// spec, a Job's pod template: removalRefused); such a fact has no
	// Pointer and no RemovePatch, since no write can remove it.
	Frozen bool `json:"frozen,omitempty"`
	// SetPatch, for a replicas reset whose live count the object after
	// the write no longer has, is the JSON patch (RFC 6902) that sets the
	// field back to Live in that object: an add of the field, or of its
	// first missing ancestor with the rest of the path in its value (a
	// manifest without spec leaves a custom resource none). A rule's
	// remedy (its decision's patch) keeps the live value with it.
	SetPatch string `json:"setPatch,omitempty"`
	// RestoredByUndo, for an orphan of a stored object (AnalyzeLive), is
	// set when kubectl rollout undo's entry (IsUndoEntry) is among its
	// Owners: the undo may have copied the field from a revision, and
	// managedFields no longer say who first wrote it (a tool's stamp, such
	// as Reloader's, comes back with the template). A removal would write
	// beyond what that proves. Admission's analyses never set it.
	RestoredByUndo bool `json:"restoredByUndo,omitempty"`
	// RevertRefused, for an imperative change, is set when the API server
	// refuses the update that puts LastApplied back over Result, so the
	// next kubectl apply of last-applied fails instead of reverting the
	// change (revertRefused: for now a PersistentVolumeClaim's storage
	// request that the apply would shrink).
	RevertRefused bool `json:"revertRefused,omitempty"`
}

// Analysis lists the facts about one write to one object. Its JSON form is
// the analysis part of the policy input.
type Analysis struct {
	// Object is the object written.
	Object ObjectRef `json:"object"`
	// Operation is "apply" when the write is (or is recomputed as) a
	// client-side apply, "update" for any other write, "live" for a stored
	// object analyzed on its own.
	Operation string `json:"operation"`
	// Strategy is the patch type of the apply.
	Strategy Strategy `json:"strategy,omitempty"`
	// LastApplied describes the last-applied annotation before the write.
	LastApplied LastAppliedInfo `json:"lastApplied"`
	// AnnotationsBytes is the size of the annotations after the write.
	AnnotationsBytes int `json:"annotationsBytes"`
	// LastAppliedTooLarge is set when AnnotationsBytes is above
	// TooLargeThreshold.
	LastAppliedTooLarge bool `json:"lastAppliedTooLarge"`
	// Drift lists fields that last-applied owns and whose live value
	// differs from it.
	Drift []FieldFact `json:"drift"`
	// ImperativeChanges lists fields that last-applied owns and that a
	// write other than apply changed or removed, or that a server-side
	// apply by a manager other than the one that owns last-applied moved
	// away from it.
	ImperativeChanges []FieldFact `json:"imperativeChanges"`
	// ApplyOwnedChanges lists fields that a server-side applier owned
	// (an Apply entry of managedFields) and that a write other than apply
	// changed or removed; Owners are those appliers.
	ApplyOwnedChanges []FieldFact `json:"applyOwnedChanges"`
	// Appliers are the server-side appliers of the object before a write
	// other than apply: its Apply entries of managedFields on the main
	// resource (kubectl apply --server-side, a GitOps controller).
	Appliers []Owner `json:"appliers"`
	// Reverts lists fields whose value someone changed since the previous
	// apply and that this apply overwrites (kubectl's --overwrite=false
	// conflict).
	Reverts []FieldFact `json:"reverts"`
	// Orphans lists fields that stay live after the apply although they are
	// in neither the manifest nor the previous last-applied; apply will
	// never remove them.
	Orphans []FieldFact `json:"orphans"`
	// DefaultedDependents lists server-defaulted fields that the apply
	// leaves behind although the manifest changed the field they depend on.
	DefaultedDependents []FieldFact `json:"defaultedDependents"`
	// ReplicasReset is set when the manifest drops spec.replicas that
	// last-applied had: the server resets it to its default.
	ReplicasReset *FieldFact `json:"replicasReset,omitempty"`
	// Rollback is set when the write is a rollout undo.
	Rollback *Rollback `json:"rollback,omitempty"`
	// HandOver, for a write that hands fields over by taking them out of
	// last-applied alone (kubectl apply edit-last-applied,
	// set-last-applied), is the record of them to write
	// (HandOverThroughLastApplied); nil for any other write, and when it
	// hands nothing over.
	HandOver *HandoverRecord `json:"handOver,omitempty"`
	// DroppedRecord, for an apply (client- or server-side) that left no
	// hand-over record where the object had one, is that record
	// (RecordDroppedByApply); nil for any other write.
	DroppedRecord *HandoverRecord `json:"droppedRecord,omitempty"`
	// Labels are the labels of the object as the write leaves it (for an
	// apply that diff predicts, its result's), which ownership declarations
	// select by. Not part of the policy input.
	Labels map[string]string `json:"-"`
}

func newAnalysis(obj *unstructured.Unstructured, operation string) *Analysis {
	return &Analysis{
		Object:              RefOf(obj),
		Labels:              obj.GetLabels(),
		Operation:           operation,
		Drift:               []FieldFact{},
		ImperativeChanges:   []FieldFact{},
		ApplyOwnedChanges:   []FieldFact{},
		Appliers:            []Owner{},
		Reverts:             []FieldFact{},
		Orphans:             []FieldFact{},
		DefaultedDependents: []FieldFact{},
	}
}

// Rollback describes a rollout undo: a write that restored the pod template
// of an earlier revision without touching last-applied, or (unconfirmed) a
// write that looks like one.
type Rollback struct {
	// RevisionKind is ReplicaSet or ControllerRevision; empty when
	// unconfirmed.
	RevisionKind string `json:"revisionKind"`
	// RevisionName is the name of the restored revision.
	RevisionName string `json:"revisionName"`
	// Revision is its number; 0 when unconfirmed.
	Revision int64 `json:"revision"`
	// Confirmed is set when the restored template equals a revision
	// exactly (DetectRollback). An unconfirmed rollback (UnconfirmedRollback)
	// is a write that looks like an undo but whose template matches no
	// revision: it names no revision, has no repair, and StaleLastApplied
	// is unknown (false).
	Confirmed bool `json:"confirmed"`
	// StaleLastApplied is set when last-applied no longer describes the
	// restored template, i.e. RepairedLastApplied differs from it.
	StaleLastApplied bool `json:"staleLastApplied"`
	// RepairSource says what proves the restored template fields of
	// RepairedLastApplied: "controllerRevision" (the manifest kept in the
	// revision's annotations) or "rebuilt" (managedFields before the undo
	// and the revisions).
	RepairSource string `json:"repairSource,omitempty"`
	// RepairedLastApplied is the annotation value to write, in kubectl's
	// format: the old last-applied with only the restored fields that the
	// repair proves a manifest's changed. Empty when the object had no
	// usable last-applied, when written it would take the object's
	// annotations beyond AnnotationsLimit (the API server would refuse
	// the undo for it), or when the restored revision is a ReplicaSet of
	// a kind other than Deployment (an Argo Rollout's, whose template
	// holds what its controller and the API server added); StaleLastApplied
	// still says whether it is stale.
	RepairedLastApplied string `json:"repairedLastApplied,omitempty"`
	// Changes lists the template fields that the undo changed.
	Changes []FieldFact `json:"changes"`
	// LastAppliedUpdaters, for a stale last-applied of a stored object
	// (StaleRollback), are the managers whose Update entries own the
	// last-applied annotation (LastAppliedUpdaters), sorted: a repair is
	// written as the only one, so that the annotation stays its and
	// kubectl apply --server-side, which upgrades the Update managers
	// owning last-applied, still finds every client-side field. Admission's
	// analyses never set it.
	LastAppliedUpdaters []string `json:"lastAppliedUpdaters,omitempty"`
	// DroppedRecord, for the undo of an apps Deployment, is the
	// hand-over's record (HandedOverAnnotation) as it was before the undo,
	// which dropped or changed it (droppedRecord); nil when the undo kept
	// it.
	DroppedRecord *HandoverRecord `json:"droppedRecord,omitempty"`
}

// HandoverRecord is a value of HandedOverAnnotation and the paths it
// lists.
type HandoverRecord struct {
	// Value is the annotation's value, as written.
	Value string `json:"value"`
	// Paths are the paths it lists (HandedOver).
	Paths []string `json:"paths"`
	// Fits is set when the object's annotations, with the record written
	// (and, for an undo's, last-applied repaired), stay within
	// AnnotationsLimit: the API server refuses a write beyond it.
	Fits bool `json:"fits"`
	// NoAnnotations, for a dropped record (Analysis.DroppedRecord), is set
	// when the write left the object without annotations at all: the
	// record is written back as the whole map.
	NoAnnotations bool `json:"noAnnotations,omitempty"`
}
