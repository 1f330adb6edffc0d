package merge

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RestoresRevisionLessFields reports whether the write that turned old
// into new restored a revision's pod template less some fields: the new
// template is a strict subset of the template of one of revisions (the
// object's ReplicaSets or ControllerRevisions, as stored, owned by new)
// that is not old's own template, and not a subset of old's template:
// the write restores some value the current template does not have. It is
// what a rollout undo by an older
// kubectl writes: kubectl decodes the revision into its own Go types and
// sends the template back without the fields newer than it (a 1.32 kubectl
// against a 1.37 server drops spec.template.spec.hostnameOverride), so the
// template matches no revision exactly (DetectRollback). A write that only
// removes fields from the current template is an edit of it, no undo, even
// where what is left also fits in an older revision. An older kubectl's
// undo to a revision that the current template only adds to is missed:
// it stays what its manager makes it.
//
// It proves no undo: it names no revision and repairs nothing; a write
// with it only looks like an undo by a client that drops the fields it
// does not know (see UnconfirmedRollback).
func RestoresRevisionLessFields(old, new *unstructured.Unstructured, revisions []*unstructured.Unstructured) bool {
	tplPath := Path{fieldName("spec"), fieldName("template")}
	oldT, newT := at(old.Object, tplPath), at(new.Object, tplPath)
	if !newT.ok {
		return false
	}
	current, restored := stripNulls(oldT.v), stripNulls(newT.v)
	if oldT.ok && FieldsWithin(restored, current) {
		// Only fields removed from the current template: an edit (a Helm
		// upgrade, a script) wherever else the rest fits.
		return false
	}
	for _, rev := range revisionsOf(revisions, new) {
		tpl := stripNulls(rev.template)
		if oldT.ok && isCurrentRevision(rev, new, tpl, current) || jsonEqual(tpl, restored) {
			continue
		}
		if FieldsWithin(restored, tpl) {
			return true
		}
	}
	return false
}

// FieldsWithin reports whether every field of sub, a decoded JSON value,
// is in sup with the same value: maps by key (sup may have more keys),
// lists by index and of the same length (as DetectRollback compares
// templates, with jsonEqual: a client that drops the fields it does not
// know drops no list element), leaves by jsonEqual (numbers by value).
// Unequal values within it mean sup has a field that sub lacks. The
// review's classifier asks it too (is a saved config the object sent?).
func FieldsWithin(sub, sup any) bool { return walkJSON("", "", sub, sup, true, sameByValue) }

// RestoresRevisionSpec reports whether new's pod template is old's with
// the pod spec of one of revisions (the object's, not the current one):
// the template's metadata as old had it, its spec a revision's spec
// exactly. The Kubernetes Dashboard's rollback copies only the
// ReplicaSet's template.spec, so after a kubectl rollout restart the
// template keeps the restart's stamp and matches no revision exactly
// (DetectRollback).
//
// It proves no undo: it names no revision and repairs nothing; a write
// with it only looks like an undo (see UnconfirmedRollback).
func RestoresRevisionSpec(old, new *unstructured.Unstructured, revisions []*unstructured.Unstructured) bool {
	metaPath := Path{fieldName("spec"), fieldName("template"), fieldName("metadata")}
	specPath := Path{fieldName("spec"), fieldName("template"), fieldName("spec")}
	oldSpec, newSpec := at(old.Object, specPath), at(new.Object, specPath)
	if !newSpec.ok || !oldSpec.ok {
		return false
	}
	restored := stripNulls(newSpec.v)
	if jsonEqual(stripNulls(oldSpec.v), restored) || !jsonEqual(stripNulls(at(old.Object, metaPath).v), stripNulls(at(new.Object, metaPath).v)) {
		return false
	}
	current := stripNulls(at(old.Object, Path{fieldName("spec"), fieldName("template")}).v)
	for _, rev := range revisionsOf(revisions, new) {
		tpl, ok := rev.template.(map[string]any)
		if ok && jsonEqual(stripNulls(tpl["spec"]), restored) && !isCurrentRevision(rev, new, stripNulls(tpl), current) {
			return true
		}
	}
	return false
}

// isCurrentRevision reports whether rev, whose template is tpl, is the
// revision of current, owner's template before the write: the same
// template, or for a revision that does not keep its owner's template
// (keepsOwnersTemplate: an Argo Rollout's ReplicaSet) one that holds all
// of current and what its controller and the API server added to it. A
// write that adds some of those additions to the template restores
// nothing.
func isCurrentRevision(rev revision, owner *unstructured.Unstructured, tpl, current any) bool {
	if keepsOwnersTemplate(rev, owner) {
		return jsonEqual(tpl, current)
	}
	return FieldsWithin(current, tpl)
}
