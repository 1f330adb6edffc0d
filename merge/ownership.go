package merge

import (
	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Who set a field is read from metadata.managedFields, never from a table
// of server defaults: the API server records, for every write, which
// fields the writer created or changed, server defaults included (the
// write that created a field also owns its defaulted siblings). The rules
// that ask "did a person set this outside apply?" (orphans, reverts of
// values that were not in last-applied) ask ownership. Every Kubernetes
// release, CRD and admission plugin adds defaults; ownership keeps up with
// all of them.

// Field managers with a fixed meaning for ownership.
const (
	// ClientSideApplyManager is the field manager of `kubectl apply`
	// (client-side) since Kubernetes 1.18.
	ClientSideApplyManager = "kubectl-client-side-apply"
	// BeforeFirstApplyManager owns, after an object's first server-side
	// apply, the fields it had before: the server's name for the earlier
	// writers.
	BeforeFirstApplyManager = "before-first-apply"
)

// creatorManagers are kubectl's commands that create objects and never
// change them afterwards. The creation owns every field of the new object,
// its server defaults included, so ownership cannot tell what the command
// set from what the server filled in: their fields are treated as an
// apply's. An object made that way has no last-applied, which the
// missing-last-applied rule reports.
var creatorManagers = map[string]bool{
	"kubectl-create": true, "kubectl-run": true, "kubectl-expose": true, "kubectl-autoscale": true,
}

// KubectlMade reports whether a person made obj with kubectl, as its
// managedFields tell: an Update entry of a command that makes objects
// from a person's input (creatorManagers, kubectl replace --force:
// isRecreation) or of client-side apply, and no Apply entry on the object
// itself (one on a subresource, a controller's status, does not count).
// The objects of other tools (Helm's, an operator's) that a person only
// touched with kubectl (rollout restart, scale, label, an in-place
// kubectl replace) have no such entry, and an object that a server-side
// applier manages (Flux, which drops last-applied before its first
// apply, Helm 4, kubectl apply --server-side) is that applier's, whoever
// made it: neither is client-side apply's business when it has no
// last-applied. So is an object that Helm adopted (HelmReleaseAnnotation):
// Helm adopts only an object that carries its release, and an adoption
// whose chart matches the object writes nothing, so no entry tells it. An
// object without managedFields (kubectl get leaves them out unless asked)
// tells nothing: false.
func KubectlMade(obj *unstructured.Unstructured) bool {
	if obj.GetAnnotations()[HelmReleaseAnnotation] != "" {
		return false
	}
	made := false
	created := obj.GetCreationTimestamp().Time
	for _, mf := range obj.GetManagedFields() {
		switch {
		case mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "":
			return false
		case mf.Operation != metav1.ManagedFieldsOperationUpdate || mf.Subresource != "":
		case creatorManagers[mf.Manager] || mf.Manager == ClientSideApplyManager:
			made = true
		case mf.Manager == recreatorManager && mf.Time != nil:
			made = made || isRecreation(Owner{Manager: mf.Manager, Operation: string(mf.Operation), Time: mf.Time.Time}, created)
		}
	}
	return made
}

// HelmReleaseAnnotation names the Helm release that owns an object. Helm
// 3 and 4 write it on every object of a release and adopt an existing
// object only when it already names the release.
const HelmReleaseAnnotation = "meta.helm.sh/release-name"

// recreatorManager is the field manager of `kubectl replace`, which
// re-creates the object with --force (a delete, then a create of the
// file) and otherwise updates it in place.
const recreatorManager = "kubectl-replace"

// recreationSlack is how far apart the creation time of an object and the
// time of its creator's managedFields entry may be: the API server takes
// both from its clock at two moments of one request, each cut to whole
// seconds.
const recreationSlack = time.Second

// isRecreation reports whether o, an entry of an object created at
// created, is the creation of the object by `kubectl replace --force` (or
// a delete and a `kubectl replace` of the new object in the same second):
// the entry of kubectl-replace on the object itself, written when the
// object was created. A re-creation owns its fields like kubectl create
// does, server defaults included, so it counts as a creator (see
// creatorManagers). A later `kubectl replace` that changes the object
// moves the entry's time: its fields are then a person's again, the
// creation's defaults with them, and only the removal proofs of the
// drivers (internal/kube's RemovalSticks) tell the defaults apart.
func isRecreation(o Owner, created time.Time) bool {
	if o.Manager != recreatorManager || o.Operation != string(metav1.ManagedFieldsOperationUpdate) || o.Subresource != "" ||
		created.IsZero() || o.Time.IsZero() {
		return false
	}
	d := o.Time.Sub(created)
	return d >= -recreationSlack && d <= recreationSlack
}

// IsKubectlManager reports whether a field manager name is one that kubectl
// records for a person's write: "kubectl" (server-side apply, and the
// user-agent default of commands that send no field manager, such as
// `rollout undo` and `scale`), "kubectl-client-side-apply", "kubectl-edit",
// "kubectl-patch", "kubectl-set", "kubectl-rollout", "kubectl-label",
// "kubectl-annotate", "kubectl-create", "kubectl-replace" and any other
// "kubectl-…" name, and "before-first-apply", which the server gives to
// fields that existed before the first server-side apply.
func IsKubectlManager(name string) bool {
	return name == "kubectl" || strings.HasPrefix(name, "kubectl-") || name == BeforeFirstApplyManager
}

// undoManagers are the effective field managers of `kubectl rollout undo`:
// kubectl sends no field manager for it, so the API server names the
// writer after the command in the user agent (kubectl.exe on Windows).
var undoManagers = map[string]bool{"kubectl": true, "kubectl.exe": true}

// IsUndoManager reports whether a field manager name is one that the API
// server records for `kubectl rollout undo`: "kubectl" or "kubectl.exe".
// Other kubectl commands that send no field manager record it too (`kubectl
// scale`, on the scale subresource; `kubectl apply --server-side`, with
// Apply): IsUndoEntry tells the undo's entry from theirs.
func IsUndoManager(name string) bool {
	return undoManagers[name]
}

// IsUndoEntry reports whether o is the managedFields entry that `kubectl
// rollout undo` writes: an Update by an undo manager (IsUndoManager) to
// the object itself, not to a subresource. kubectl's rollbackers patch
// spec.template (and a Deployment's annotations) with it; kubectl edit,
// patch and set write under their own names (kubectl-edit, kubectl-patch,
// kubectl-set).
func IsUndoEntry(o Owner) bool {
	return undoManagers[o.Manager] && updatesObject(o)
}

// updatesObject reports whether o is an Update entry of the object itself,
// not of a subresource: what a rollout undo writes.
func updatesObject(o Owner) bool {
	return o.Operation == string(metav1.ManagedFieldsOperationUpdate) && o.Subresource == ""
}

// undoLikeManagers are the other effective field managers that kubectl's
// rollout undo code writes under, besides kubectl's own (undoManagers):
// those of OpenShift's CLI, oc, which builds that command in (openshift/oc's
// pkg/cli/rollout wraps k8s.io/kubectl/pkg/cmd/rollout) and names itself
// in its user agent (oc.exe on Windows). oc's own commands (oc set env,
// set volumes, set probe) also patch without a field manager under that
// name, so an oc entry proves no undo (IsUndoEntry); it only makes a write
// one that may be.
var undoLikeManagers = map[string]bool{"oc": true, "oc.exe": true}

// versionedKubectl matches the names of kubectl binaries named after their
// version, as people keep several side by side (kubectl.1.32,
// kubectl-1.31, kubectl1.30, kubectl-v1.29; kubectl.1.32.exe on Windows):
// the API server names a write that sends no field manager after the
// binary, and every kubectl command but rollout undo (and apply
// set-last-applied, which changes last-applied alone) sends one.
var versionedKubectl = regexp.MustCompile(`^kubectl[-._]?v?[0-9]+(\.[0-9]+)*(\.exe)?$`)

// MayBeUndoManager reports whether a field manager name is one that the
// API server records for kubectl's rollout undo, in kubectl or in oc: the
// undo managers (IsUndoManager), "oc" and "oc.exe", and a kubectl binary
// named after its version (versionedKubectl). A write under one of them
// that looks like an undo may be one; a write under any other name is
// another tool's (a kubectl renamed to anything else, such as a symlink
// k, is recognized only by an undo's shape: undoDroppingFields in
// internal/review).
func MayBeUndoManager(name string) bool {
	return undoManagers[name] || undoLikeManagers[name] || versionedKubectl.MatchString(name)
}

// MayBeUndoEntry reports whether o may be the managedFields entry of a
// rollout undo: an Update by a manager that MayBeUndoManager accepts to
// the object itself. Only IsUndoEntry's entries prove one.
func MayBeUndoEntry(o Owner) bool {
	return MayBeUndoManager(o.Manager) && updatesObject(o)
}

// ownership classifies the managedFields entries of one object. Its zero
// value knows no entries: every owner is then a person's when its manager
// is (see isPerson), and none is an applier by its entry.
type ownership struct {
	// recordedManifest holds the entries (entryKey) that own the
	// last-applied annotation: they wrote a manifest, so their fields are
	// that manifest's and its defaults.
	recordedManifest map[string]bool
	// people are the extra managers that count as a person's
	// (WithKubectlManagers).
	people map[string]bool
	// recreations holds the entries (entryKey) that re-created the object
	// (isRecreation); nil when none did.
	recreations map[string]bool
}

// lastAppliedField is the last-applied annotation as a field path.
var lastAppliedField = Path{fieldName("metadata"), fieldName("annotations"), fieldName(LastAppliedAnnotation)}

func (a *Analyzer) ownershipOf(mfs []ManagedFields) ownership {
	o := ownership{recordedManifest: map[string]bool{}, people: a.kubectlManagers}
	for _, mf := range mfs {
		if mf.recreation {
			if o.recreations == nil {
				o.recreations = map[string]bool{}
			}
			o.recreations[ownerKey(mf.Owner)] = true
		}
		if mf.Fields != nil && mf.Fields.Has(fieldpath.Path(lastAppliedField)) {
			o.recordedManifest[ownerKey(mf.Owner)] = true
		}
	}
	return o
}

func ownerKey(o Owner) string {
	return o.Manager + "\x00" + o.Operation + "\x00" + o.Subresource
}

// isApplier reports whether o wrote a manifest: any server-side apply,
// client-side apply (under kubectl's name, or any manager whose entry owns
// the last-applied annotation: older kubectl, create/replace
// --save-config, other tools that apply client-side), the server's
// before-first-apply, and kubectl's creating commands (see
// creatorManagers; and isRecreation). An applier's fields are its manifest's or the server's
// defaults for it; none of them is an orphan.
func (ow ownership) isApplier(o Owner) bool {
	return o.Operation == string(metav1.ManagedFieldsOperationApply) ||
		o.Manager == ClientSideApplyManager || o.Manager == BeforeFirstApplyManager ||
		creatorManagers[o.Manager] || ow.recordedManifest[ownerKey(o)] || ow.recreations[ownerKey(o)]
}

// isPerson reports whether o is a person's write outside apply: one of
// kubectl's imperative commands (edit, patch, set, scale, label, annotate,
// rollout restart, rollout undo under the user-agent name "kubectl",
// replace) or a manager configured as a person's (WithKubectlManagers).
// Any other manager is a controller's or a tool's, whose fields are its
// own business.
func (ow ownership) isPerson(o Owner) bool {
	if ow.isApplier(o) {
		return false
	}
	return IsKubectlManager(o.Manager) || ow.people[o.Manager]
}

// setByPerson reports whether a field with owners ows was set outside
// apply by people alone: every owner is a person's write (see isPerson). A
// field that an applier owns (a manifest's, or its server default), that
// a controller or a tool owns too (it manages the field), or that nobody
// owns (managedFields reset or stripped) was not.
func (ow ownership) setByPerson(ows []Owner) bool {
	for _, o := range ows {
		if !ow.isPerson(o) {
			return false
		}
	}
	return len(ows) > 0
}

// onlyAppliers reports whether ows is not empty and every owner is an
// applier: the field is a manifest's or its server default, and nobody
// changed it by hand.
func (ow ownership) onlyAppliers(ows []Owner) bool {
	for _, o := range ows {
		if !ow.isApplier(o) {
			return false
		}
	}
	return len(ows) > 0
}

// onlyClientSideAppliers reports whether ows is not empty and every owner
// is an applier that wrote with Update, not with server-side apply: a
// client-side apply (or an earlier writer, before-first-apply).
func (ow ownership) onlyClientSideAppliers(ows []Owner) bool {
	for _, o := range ows {
		if !ow.isApplier(o) || o.Operation == string(metav1.ManagedFieldsOperationApply) {
			return false
		}
	}
	return len(ows) > 0
}
