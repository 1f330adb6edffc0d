package merge

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// serverSideLastAppliedChanges lists the fields that last-applied owns and
// that a server-side apply by manager turned from old into new, leaving
// them different from last-applied: the next client-side kubectl apply of
// the manifest last-applied records puts the last-applied value back
// (kubectl apply --server-side --field-manager=deploy-bot --force-conflicts
// of another image). It compares with new's last-applied: kubectl's own
// server-side apply (manager "kubectl") has the API server rewrite
// last-applied to the applied configuration in the same write
// (lastAppliedUpdater in k8s.io/apiserver's managedfields), so it moves
// nothing away from last-applied. Only a last-applied that a client-side
// applier other than manager recorded counts (an Update entry owns the
// annotation: kubectl apply, create or replace --save-config): a manager
// that owns it itself applies its own manifest (a tool that applied
// client-side and now applies server-side, such as Argo CD), and one that
// only Apply entries own belongs to an object moved to server-side apply
// (kubectl-last-applied after kubectl apply --server-side or kubectl
// hygiene migrate; a tool's Apply entry after kubectl's csaupgrade).
func (a *Analyzer) serverSideLastAppliedChanges(old, new *unstructured.Unstructured, oldMFs []ManagedFields, manager string) ([]FieldFact, error) {
	if ownsLastApplied(oldMFs, manager) || !recordedClientSide(oldMFs) {
		return []FieldFact{}, nil
	}
	_, original, parsed := a.lastAppliedInfo(new)
	if original == nil {
		return []FieldFact{}, nil
	}
	return orValidated(a, func(a *Analyzer) ([]FieldFact, error) {
		return a.imperativeChanges(original, parsed, old, new)
	})
}

// recordedClientSide reports whether an Update entry of mfs owns the
// last-applied annotation.
func recordedClientSide(mfs []ManagedFields) bool {
	for _, mf := range mfs {
		if mf.Operation == string(metav1.ManagedFieldsOperationUpdate) && mf.Fields != nil && mf.Fields.Has(fieldpath.Path(lastAppliedField)) {
			return true
		}
	}
	return false
}

// ownsLastApplied reports whether one of manager's entries in mfs owns
// the last-applied annotation.
func ownsLastApplied(mfs []ManagedFields, manager string) bool {
	for _, mf := range mfs {
		if mf.Manager == manager && mf.Fields != nil && mf.Fields.Has(fieldpath.Path(lastAppliedField)) {
			return true
		}
	}
	return false
}
