package merge

import (
	"fmt"

	"k8s.io/client-go/util/csaupgrade"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// AnalyzeServerSideApply analyzes a server-side apply by manager that
// turned old into new, as an admission webhook sees it: new is the object
// after the apply, with the managedFields that the API server computed for
// it. The applied configuration is manager's Apply entry in new's
// managedFields (the main resource's, not a subresource's).
//
// Server-side apply removes only fields that the applier alone owned and
// dropped from its configuration; it never removes a field that an Update
// owns. The analysis lists as orphans the fields of new that the applied
// configuration leaves out and that only kubectl's imperative writes own
// (kubectl edit, patch, set, rollout restart, label, annotate, an undo: see
// IsKubectlManager and WithKubectlManagers), including what a client-side
// apply wrote before the object moved to server-side apply
// (kubectl-client-side-apply, before-first-apply). It leaves out status,
// server-managed metadata, server defaults, spec.replicas (leaving it out of
// the configuration hands it to kubectl scale or an autoscaler), fields
// that nobody owns and fields that another applier or any other manager
// owns too. It also lists defaulted dependents, as AnalyzeClientSideApply does, with
// the applied configuration as the manifest, and as ImperativeChanges the
// fields last-applied owns that the apply moved away from it (see
// serverSideLastAppliedChanges). When new has no Apply entry of manager,
// nothing was applied and the analysis lists nothing.
func (a *Analyzer) AnalyzeServerSideApply(old, new *unstructured.Unstructured, manager string) (*Analysis, error) {
	an := newAnalysis(new, "apply")
	var original *unstructured.Unstructured
	an.LastApplied, original, _ = a.lastAppliedInfo(old)
	an.LastApplied.Replaced = LastAppliedReplaced(old, new)
	an.AnnotationsBytes = AnnotationsSize(new)
	an.LastAppliedTooLarge = an.AnnotationsBytes > TooLargeThreshold
	mfs, err := DecodeManagedFields(new)
	if err != nil {
		return nil, err
	}
	applied := appliedFields(mfs, manager)
	if applied == nil || manager == LastAppliedManager || appliedInAnotherVersion(mfs, manager, new.GetAPIVersion()) {
		return an, nil
	}
	tvs, err := a.fieldSets(written(old.Object), written(new.Object))
	if err != nil {
		return nil, err
	}
	result, err := tvs[1].ToFieldSet()
	if err != nil {
		return nil, fmt.Errorf("computing field set: %w", err)
	}
	config, ok := tvs[1].ExtractItems(applied).AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("extracting the configuration that %s applied: not an object", manager)
	}
	kind := new.GetKind()
	var recorded map[string]any
	if original != nil {
		recorded = original.Object
	}
	objs := ssaObjects{live: old.Object, result: new.Object, lastApplied: recorded, migrated: migratedManagers(old), granular: granularIn(tvs[1])}
	if kept, _, err := a.parseLastApplied(new); err == nil {
		objs.keptLastApplied = kept.Object
	}
	an.Orphans = a.serverSideOrphans(kind, objs, result, applied, mfs)
	oldMFs, err := DecodeManagedFields(old)
	if err != nil {
		return nil, err
	}
	if an.ImperativeChanges, err = a.serverSideLastAppliedChanges(old, new, oldMFs, manager); err != nil {
		return nil, err
	}
	an.Orphans = withRemovePatches(new.Object, an.Orphans)
	in := applyInput{kind: kind, live: old, manifest: &unstructured.Unstructured{Object: config}, result: new}
	an.DefaultedDependents = withPointers(new.Object, a.defaultedDependents(in, config))
	return an, nil
}

// appliedFields returns the fields of manager's Apply entries on the main
// resource, nil when it has none.
func appliedFields(mfs []ManagedFields, manager string) *fieldpath.Set {
	var out *fieldpath.Set
	for _, mf := range mfs {
		if mf.Manager != manager || mf.Operation != string(metav1.ManagedFieldsOperationApply) || mf.Subresource != "" {
			continue
		}
		if out == nil {
			out = &fieldpath.Set{}
		}
		out = out.Union(mf.Fields)
	}
	return out
}

// appliedInAnotherVersion reports whether one of manager's Apply entries
// on the main resource names its fields in another version than
// apiVersion, the object's: the configuration it applied cannot be read
// from the object path by path (see sameVersion). An entry without an
// apiVersion, which the API server never writes, counts as the object's.
func appliedInAnotherVersion(mfs []ManagedFields, manager, apiVersion string) bool {
	for _, mf := range mfs {
		if mf.Manager == manager && mf.Operation == string(metav1.ManagedFieldsOperationApply) && mf.Subresource == "" &&
			mf.APIVersion != "" && mf.APIVersion != apiVersion {
			return true
		}
	}
	return false
}

// ssaObjects are the objects of a server-side apply: the object before
// and after it, and the last-applied manifest of an earlier client-side
// apply (nil when there is none).
type ssaObjects struct {
	live, result, lastApplied map[string]any
	// keptLastApplied is the last-applied manifest that result keeps
	// (nil when it has none, or none that names it): old's, unless the
	// API server rewrote it from the applied configuration, as it does
	// for kubectl's own server-side apply (the field manager kubectl).
	keptLastApplied map[string]any
	// migrated are the managers whose fields kubectl moves to the applier
	// right after the apply (see migratedManagers).
	migrated map[string]bool
	// granular reports the maps and lists of result's schema whose
	// members are owned one by one (see contentOwners).
	granular func(fieldpath.Path) bool
}

// LastAppliedManager is the field manager of kubectl apply --server-side's
// own server-side apply of the last-applied annotation alone, which it
// sends after the apply of the manifest before it upgrades the
// managedFields of client-side apply (saveLastApplyAnnotationIfNecessary
// in k8s.io/kubectl's apply.go): bookkeeping, not a manifest, so its
// analysis lists nothing.
const LastAppliedManager = "kubectl-last-applied"

// lastAppliedFieldSet is the set of the last-applied annotation alone.
var lastAppliedFieldSet = fieldpath.NewSet(fieldpath.MakePathOrDie("metadata", "annotations", LastAppliedAnnotation))

// migratedManagers returns the managers of old's Update entries that own
// the last-applied annotation. Right after a server-side apply, kubectl
// (for any --field-manager, and the tools that apply through kubectl's
// code, such as Argo CD) moves these managers' fields to the applier with
// csaupgrade and applies again, which deletes the ones the manifest
// dropped (migrateToSSAIfNecessary in k8s.io/kubectl's apply.go). So a
// field that only they own is no orphan of this apply: listing it would be
// a false warning on every first kubectl apply --server-side of an object
// applied client-side. A client that applies without that upgrade (a
// client-go applier) keeps such fields; apply-hygiene cannot tell it from
// kubectl at admission, so those are missed, never falsely reported
// (kubectl hygiene migrate lists them).
func migratedManagers(old *unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for _, e := range csaupgrade.FindFieldsOwners(old.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, lastAppliedFieldSet) {
		out[e.Manager] = true
	}
	return out
}

// migratedAway reports whether every owner in ows is an Update entry of a
// migrated manager.
func (o ssaObjects) migratedAway(ows []Owner) bool {
	for _, w := range ows {
		if w.Operation != string(metav1.ManagedFieldsOperationUpdate) || !o.migrated[w.Manager] {
			return false
		}
	}
	return len(ows) > 0
}

// serverSideOrphans lists the fields of result outside applied that people
// set outside apply (see ownership.setByPerson), and the leftovers of
// client-side apply: fields of its last-applied manifest that only
// client-side appliers own (kubernetes#99003). A client-side applier's
// other fields are its server defaults, never orphans, and neither is a
// field of a built-in kind at the value the server defaults it to,
// whoever owns it (isServerDefault). Whether a field is a leftover, and
// whether kubectl's migration takes it away, is read from the owners of
// what it holds (contentOwners): an entry that holds a granular map as the
// empty value it once wrote (kubectl apply's f:annotations, once kubectl
// edit --save-config took last-applied over) owns the map, not the keys
// others put in it. So a key that kubectl edit --save-config added goes
// with the migration of kubectl-edit's fields, and a mesh injector's
// stamp, which no write owns (the API server tracks a write before
// mutating admission), is no leftover even when a saved record has it:
// removed, the injector stamps it again. Nor is a field a person's orphan
// that no entry owns what it holds, whoever holds the map around it as an
// empty leaf (kubectl-replace's f:annotations, once a patch removed the
// last-applied its replace --save-config wrote): the mesh's stamp in it is
// nobody's, as it is at a client-side apply (orphans). Nor is a field that
// live's record says was handed over (HandedOverAnnotation).
func (a *Analyzer) serverSideOrphans(kind string, objs ssaObjects, resultSet, applied *fieldpath.Set, mfs []ManagedFields) []FieldFact {
	f := newFinder()
	ow := a.ownershipOf(mfs)
	out := []FieldFact{}
	if unplacedOwner(mfs, ow, objs.result) {
		return out
	}
	inExtra := func(fp fieldpath.Path) bool { return !applied.Has(fp) && resultSet.Has(fp) }
	seen := map[string]bool{}
	builtIn := a.scheme.Recognizes((&unstructured.Unstructured{Object: objs.result}).GroupVersionKind())
	handedOver := HandedOver(objs.live)
	resultSet.Difference(applied).Leaves().Iterate(func(fp fieldpath.Path) {
		p := topElement(Path(fp), inExtra)
		key := p.String()
		if seen[key] || serverManaged(p) || workloadState(key) || heldThroughAlias(objs.result, p, applied.Has) || handedOverAt(handedOver, key) {
			return
		}
		seen[key] = true
		v := f.at(objs.result, p)
		if !v.ok || isEmpty(v.v) || changedByAdmission(p, f.at(objs.live, p), v) {
			return
		}
		ows, held := owners(mfs, p), contentOwners(mfs, p, objs.granular)
		if holdsScaledCount(ows) || objs.migratedAway(held) || builtIn && isServerDefault(kind, objs.result, p, v.v) {
			// Removed, a server default comes back: no orphan, as in
			// a client-side apply's (orphans).
			return
		}
		leftover := ow.onlyClientSideAppliers(held) && f.at(objs.lastApplied, p).ok
		// A field that the last-applied the result keeps has is the next
		// client-side apply's to set back, not an orphan: a tool's apply
		// of another field (cert-manager's cainjector applies caBundle
		// alone) leaves last-applied as it was, and a person's value of
		// a field it has is drift, not a field no manifest declares.
		byPerson := ow.setByPerson(ows) && len(held) > 0 && !f.at(objs.keptLastApplied, p).ok
		if !byPerson && !leftover {
			return
		}
		out = append(out, a.fact(kind, p, factValues{live: f.at(objs.live, p), result: v}, ows))
	})
	return out
}
