package merge

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// applyInput holds the objects of one apply: the live object before it,
// the previous manifest (nil when there was none), the new manifest and the
// object after it.
type applyInput struct {
	kind     string
	live     *unstructured.Unstructured
	original map[string]any
	manifest *unstructured.Unstructured
	result   *unstructured.Unstructured
	// originalParsed and manifestParsed are the cached parses of original
	// and manifest when they come from a last-applied annotation, else nil.
	originalParsed, manifestParsed *parsedLastApplied
	// liveManaged is live's managedFields, decoded when a fact first
	// asks who owns a field, once for the whole request (analyzeApply
	// sets it when the caller did not).
	liveManaged *managedFieldsOnce
}

// analyzeApply fills an with the facts of the apply in. It changes an only
// when it succeeds.
func (a *Analyzer) analyzeApply(in applyInput, an *Analysis) error {
	if in.liveManaged == nil {
		in.liveManaged = lazyManagedFields(in.live)
	}
	_, err := orValidated(a, func(a *Analyzer) (struct{}, error) {
		return struct{}{}, a.analyzeApplyOnce(in, an)
	})
	return err
}

func (a *Analyzer) analyzeApplyOnce(in applyInput, an *Analysis) error {
	// A Secret as stored: kubectl's predicted result still has stringData.
	rawOriginal := in.original
	in = in.asStored()
	manifestSrc := a.writtenManifest(in.kind, in.manifest.Object, in.manifestParsed)
	manifest := manifestSrc.obj
	tvs, err := a.fieldSets(a.writtenLastApplied(in.kind, in.original, in.originalParsed), manifestSrc,
		stored(in.live.Object), stored(in.result.Object))
	if err != nil {
		return err
	}
	// The field sets of the previous manifest, the manifest and the result;
	// live's is read by nothing (live is compared as a typed value).
	fs, err := a.sets([]*typed.TypedValue{tvs[0], tvs[1], tvs[3]}, in.originalParsed.original(), in.manifestParsed.manifest())
	if err != nil {
		return err
	}
	cmp, err := tvs[2].Compare(tvs[3])
	if err != nil {
		return fmt.Errorf("comparing live and result: %w", err)
	}
	changed := cmp.Modified.Union(cmp.Removed).Union(cmp.Added)
	// Live's managedFields are decoded by the first fact that asks for
	// owners (in.liveManaged), and an error decoding them fails the
	// analysis, which is then left as it was.
	reverts, err := a.reverts(in, changed, granularIn(tvs[3]))
	if err != nil {
		return err
	}
	orphans, err := a.orphans(in.kind, in.live.Object, in.result.Object, tvs[3], fs[2], fs[0].Union(fs[1]), in.liveManaged, recordsObject(in.original, in.live))
	if err != nil {
		return err
	}
	dataOrphans, err := a.stringDataOrphans(in, rawOriginal)
	if err != nil {
		return err
	}
	reset, err := a.replicasReset(in, manifest, granularIn(tvs[3]))
	if err != nil {
		return err
	}
	an.Reverts = reverts
	an.Orphans = withRemovePatches(in.result.Object, append(orphans, dataOrphans...))
	an.ReplicasReset = reset
	if an.ReplicasReset != nil {
		// One fact for one field: the reset says what happens to replicas.
		an.Reverts = slices.DeleteFunc(an.Reverts, func(f FieldFact) bool { return f.Path.String() == "spec.replicas" })
	}
	an.DefaultedDependents = withPointers(in.result.Object, a.defaultedDependents(in, manifest))
	an.AnnotationsBytes = AnnotationsSize(in.result)
	an.LastAppliedTooLarge = an.AnnotationsBytes > TooLargeThreshold
	return nil
}

// asStored is in with the previous manifest, manifest and result as the
// API server stores them (storedForm): a Secret's stringData folded into
// data, so that a manifest's stringData.password is the data.password the
// facts name, and base64 bytes (a Secret's data, a ConfigMap's binaryData)
// encoded as the server encodes them.
func (in applyInput) asStored() applyInput {
	in.original = storedForm(in.kind, in.original)
	in.manifest = &unstructured.Unstructured{Object: storedForm(in.kind, in.manifest.Object)}
	in.result = &unstructured.Unstructured{Object: storedForm(in.kind, in.result.Object)}
	return in
}

// withoutLastApplied returns obj without the last-applied annotation.
func withoutLastApplied(obj map[string]any) map[string]any {
	u := (&unstructured.Unstructured{Object: obj}).DeepCopy()
	if annots := u.GetAnnotations(); annots != nil {
		delete(annots, LastAppliedAnnotation)
		u.SetAnnotations(annots)
	}
	return u.Object
}

// reverts lists the changed fields that someone changed since the last
// apply and that this apply puts its own value back into, or removes (also
// when the manifest sets an enclosing field to null, which deletes the
// whole field). Live's managedFields are decoded for the first field
// that someone may have changed.
func (a *Analyzer) reverts(in applyInput, changed *fieldpath.Set, granular func(fieldpath.Path) bool) ([]FieldFact, error) {
	f := newFinder()
	var ow *ownership
	out := []FieldFact{}
	for _, p := range units(changed) {
		orig, cur, res := f.at(in.original, p), f.at(in.live.Object, p), f.at(in.result.Object, p)
		if serverManaged(p) || sameAt(p, cur, orig) || sameAt(p, cur, res) {
			continue
		}
		mfs, err := in.liveManaged.get()
		if err != nil {
			return nil, err
		}
		if ow == nil {
			o := a.ownershipOf(mfs)
			ow = &o
		}
		ows := contentOwners(mfs, p, granular)
		if !changedSinceApply(orig, cur, ows, *ow) {
			continue
		}
		out = append(out, a.fact(in.kind, p, factValues{live: cur, result: res,
			lastApplied: orig, manifest: f.at(in.manifest.Object, p)}, ows))
	}
	return withoutMirrors(in.live.Object, out), nil
}

// withoutMirrors drops the facts of fields that the API server copies
// from another on every write (mirroredFrom: the pod spec's deprecated
// serviceAccount, from serviceAccountName) when facts has one of their
// source: the mirror's change is the source's, reported there, and a
// second fact would say the write "removes" a field it set to the source's
// value.
func withoutMirrors(obj map[string]any, facts []FieldFact) []FieldFact {
	reported := make(map[string]bool, len(facts))
	for _, ff := range facts {
		reported[ff.Path.String()] = true
	}
	return slices.DeleteFunc(facts, func(ff FieldFact) bool {
		src, ok := mirroredFrom(obj, ff.Path)
		return ok && reported[src.String()]
	})
}

// changedSinceApply reports whether a field whose live value cur differs
// from the previous manifest's orig was changed since that apply: for a
// field the manifest had, unless only appliers own it (live then differs
// from the manifest by server defaults alone, such as the defaulted
// fields of a list element that the manifest drops); for any other field,
// when a person set it (see ownership.setByPerson). Either way, when
// another tool's server-side apply owns it (see appliedByAnotherTool).
func changedSinceApply(orig, cur presence, ows []Owner, ow ownership) bool {
	if appliedByAnotherTool(ows) {
		return cur.ok || orig.ok
	}
	if orig.ok {
		return !ow.onlyAppliers(ows)
	}
	return cur.ok && ow.setByPerson(ows)
}

// appliedByAnotherTool reports whether one of ows is a server-side apply
// by a manager other than kubectl's own ("kubectl", whose last-applied the
// API server keeps in step with what it applies, and
// kubectl-last-applied): its applied configuration holds the value, never
// a server default, and it applies it again (kubectl apply --server-side
// --field-manager=deploy-bot --force-conflicts of another image, a GitOps
// controller). kubectl's migration to server-side apply deletes
// last-applied right after such an apply, so the field may be in no
// last-applied at all.
func appliedByAnotherTool(ows []Owner) bool {
	for _, o := range ows {
		if o.Operation == string(metav1.ManagedFieldsOperationApply) && o.Manager != "kubectl" && o.Manager != LastAppliedManager {
			return true
		}
	}
	return false
}

// orphans lists the fields of result outside known (the new manifest and
// the previous last-applied) that a person set outside apply (see
// ownership.setByPerson), except server-managed ones, those live's
// record says were handed over (HandedOverAnnotation), empty values and
// the workload's state (workloadState: spec.replicas, spec.paused, a
// StatefulSet's partition, spec.suspend; holdsScaledCount: the count a
// /scale write set, wherever the kind keeps it), alone or inside a struct. A
// field that an applier owns (server defaults included) or that nobody
// owns is never an orphan, nor is a field of a built-in kind whose value is the one the
// server defaults it to (isServerDefault). No field is one when an entry
// of another version owns fields live does not place (unplacedOwner). A struct that is wholly outside
// known is one orphan (see wholeStruct); resultTV is result's typed value, for its schema.
//
// Live's managedFields (liveManaged) are decoded for the first candidate
// that needs owners.
func (a *Analyzer) orphans(kind string, live, result map[string]any, resultTV *typed.TypedValue, resultSet, known *fieldpath.Set,
	liveManaged *managedFieldsOnce, savedRecord bool,
) ([]FieldFact, error) {
	f := newFinder()
	out := []FieldFact{}
	extra := resultSet.Difference(known)
	inExtra := func(fp fieldpath.Path) bool { return !known.Has(fp) && resultSet.Has(fp) }
	seen := map[string]bool{}
	builtIn := a.scheme.Recognizes((&unstructured.Unstructured{Object: result}).GroupVersionKind())
	var (
		mfs       []ManagedFields
		ow        ownership
		decoded   bool
		decodeErr error
		unplaced  bool
	)
	// decode reads live's managedFields and their ownership on its first
	// call; it reports whether they decoded.
	decode := func() bool {
		if decoded {
			return decodeErr == nil
		}
		decoded = true
		if mfs, decodeErr = liveManaged.get(); decodeErr != nil {
			return false
		}
		ow = a.ownershipOf(mfs)
		unplaced = unplacedOwner(mfs, ow, live)
		if !savedRecord || !builtIn {
			return true
		}
		// last-applied is kubectl's --save-config of this very object
		// (kubectl edit --save-config): it records every field the object
		// had then, so a field it lacks (every candidate here) was not in
		// it, and the entry that owns the record (kubectl-edit, which
		// later plain edits share) is no applier for it. The server's
		// defaults of that write are left out below by the kind's
		// defaults, which only a built-in kind has: a custom resource's
		// record keeps counting as a manifest's. Only kubectl edit's
		// entry: another writer that records the object (an exported
		// object applied under another manager) writes no plain edits
		// under the same name.
		delete(ow.recordedManifest, ownerKey(Owner{Manager: editManager, Operation: string(metav1.ManagedFieldsOperationUpdate)}))
		return true
	}
	granular := granularIn(resultTV)
	handedOver := HandedOver(live)
	extra.Leaves().Iterate(func(fp fieldpath.Path) {
		leaf := topElement(Path(fp), inExtra)
		if workloadState(leaf.String()) {
			return
		}
		p := wholeStruct(leaf, resultTV, known, func(sp fieldpath.Path) bool { return decode() && ownedEmpty(mfs, sp) })
		if holdsWorkloadState(p, result) {
			// The struct's removal would remove the workload's state
			// with it (a partition), and its other fields one by one may
			// be defaults of the same write: none is reported.
			return
		}
		key := p.String()
		if seen[key] || serverManaged(p) || workloadState(key) || heldThroughAlias(result, p, known.Has) || handedOverAt(handedOver, key) {
			return
		}
		seen[key] = true
		v, before := f.at(result, p), f.at(live, p)
		if !v.ok || isEmpty(v.v) || changedByAdmission(p, before, v) {
			return
		}
		if !decode() || unplaced {
			return
		}
		ows := contentOwners(mfs, p, granular)
		if holdsScaledCount(ows) || !ow.setByPerson(ows) || builtIn && isServerDefault(kind, result, p, v.v) {
			return
		}
		out = append(out, a.fact(kind, p, factValues{live: before, result: v}, ows))
	})
	if decodeErr != nil {
		return nil, decodeErr
	}
	return out, nil
}

// editManager is kubectl edit's field manager, which writes both its
// --save-config records and its plain edits.
const editManager = "kubectl-edit"

// recordsObject reports whether original, the decoded last-applied, is a
// record of live itself: it holds live's uid, which kubectl's
// --save-config of a read object (kubectl edit --save-config) records and
// no manifest has.
func recordsObject(original map[string]any, live *unstructured.Unstructured) bool {
	meta, _ := original["metadata"].(map[string]any)
	uid, _ := meta["uid"].(string)
	return uid != "" && uid == string(live.GetUID())
}

// changedByAdmission reports whether a field that is in neither the
// manifest nor last-applied changed within the apply itself (live before
// it and the result differ): the apply's patch never touches such a field,
// so another mutating webhook that stamps every write does, and the field
// is that webhook's, whoever owns it in managedFields (which the API
// server records before mutating admission). A field the apply leaves as
// it was, or that it adds, is not.
func changedByAdmission(p Path, before, after presence) bool {
	return before.ok && !sameAt(p, before, after)
}

func (a *Analyzer) replicasReset(in applyInput, manifest map[string]any, granular func(fieldpath.Path) bool) (*FieldFact, error) {
	p := Path{fieldName("spec"), fieldName("replicas")}
	orig, man := at(in.original, p), at(manifest, p)
	if !orig.ok || orig.v == nil || (man.ok && man.v != nil) {
		return nil, nil
	}
	// A result that keeps the live count resets nothing: apply
	// edit-last-applied dropping replicas is the hand-over itself.
	if res, live := at(in.result.Object, p), at(in.live.Object, p); res.ok && live.ok && jsonEqual(res.v, live.v) {
		return nil, nil
	}
	mfs, err := in.liveManaged.get()
	if err != nil {
		return nil, err
	}
	res := at(in.result.Object, p)
	if !res.ok && defaultsReplicas(in.live.GetAPIVersion(), in.kind) {
		res = presence{v: int64(1), ok: true}
	}
	live := at(in.live.Object, p)
	f := a.fact(in.kind, p, factValues{live: live, result: res, lastApplied: orig}, contentOwners(mfs, p, granular))
	if live.ok && live.v != nil {
		if patch, err := setPatch(in.result.Object, p, live.v); err == nil {
			f.SetPatch = patch
		}
	}
	return &f, nil
}

// defaultsReplicas reports whether the API server sets spec.replicas to 1
// when an object of this kind has none (the defaulting functions of apps/v1
// and core/v1). An object the API server wrote has the default already; a
// result predicted without the server (kubectl hygiene diff) gets it here.
// No library exports those defaults: they live in k8s.io/kubernetes.
func defaultsReplicas(apiVersion, kind string) bool {
	switch apiVersion + " " + kind {
	case "apps/v1 Deployment", "apps/v1 StatefulSet", "apps/v1 ReplicaSet", "v1 ReplicationController":
		return true
	}
	return false
}

// dependent is a field that the server defaults from another one and that
// becomes invalid or stale when the other changes.
type dependent struct {
	kinds    []string
	field    Path
	value    string
	sibling  Path
	rejected bool
}

func dependents() []dependent {
	updateStrategy := fieldName("updateStrategy")
	strategy := fieldName("strategy")
	spec := fieldName("spec")
	return []dependent{
		{kinds: []string{"StatefulSet"}, field: Path{spec, updateStrategy, fieldName("type")}, value: "OnDelete",
			sibling: Path{spec, updateStrategy, fieldName("rollingUpdate")}, rejected: true},
		{kinds: []string{"DaemonSet"}, field: Path{spec, updateStrategy, fieldName("type")}, value: "OnDelete",
			sibling: Path{spec, updateStrategy, fieldName("rollingUpdate")}},
		{kinds: []string{"Deployment"}, field: Path{spec, strategy, fieldName("type")}, value: "Recreate",
			sibling: Path{spec, strategy, fieldName("rollingUpdate")}, rejected: true},
	}
}

// defaultedDependents lists the dependents of the apps/v1 workloads that
// the apply leaves behind. Only group apps: a custom resource named like a
// workload (an OpenKruise StatefulSet) has its own defaults and
// validation, and its sibling is never removed on a guess.
func (a *Analyzer) defaultedDependents(in applyInput, manifest map[string]any) []FieldFact {
	out := []FieldFact{}
	if in.live.GroupVersionKind().Group != "apps" {
		return out
	}
	for _, d := range dependents() {
		if !contains(d.kinds, in.kind) {
			continue
		}
		typ, sib := at(in.result.Object, d.field), at(in.result.Object, d.sibling)
		if typ.v != d.value || !sib.ok || sib.v == nil || at(manifest, d.sibling).ok {
			continue
		}
		// A sibling the API server accepts (a DaemonSet's rollingUpdate
		// under OnDelete) is removed only when it is what the server
		// defaulted: a value someone set there is theirs, and proves
		// nothing stale.
		if !d.rejected && !serverDefaulted(in.kind, in.result.Object, d.sibling, sib.v) {
			continue
		}
		f := a.fact(in.kind, d.sibling, factValues{live: at(in.live.Object, d.sibling), result: sib,
			lastApplied: at(in.original, d.sibling)}, nil)
		f.DependsOn = d.field
		f.Rejected = d.rejected
		out = append(out, f)
	}
	return out
}

// serverDefaulted reports whether v, the value at p of obj, is all server
// defaults: each field of a struct (isServerDefault), or the value itself.
func serverDefaulted(kind string, obj map[string]any, p Path, v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return isServerDefault(kind, obj, p, v)
	}
	for k, x := range m {
		if !serverDefaulted(kind, obj, append(p[:len(p):len(p)], fieldName(k)), x) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// factValues are the values of one field in the objects of a write.
type factValues struct {
	live, result, lastApplied, manifest presence
}

func (a *Analyzer) fact(kind string, p Path, v factValues, ows []Owner) FieldFact {
	return FieldFact{
		Path:        p,
		Live:        a.factValue(kind, p, v.live),
		Result:      a.factValue(kind, p, v.result),
		LastApplied: a.factValue(kind, p, v.lastApplied),
		Manifest:    a.factValue(kind, p, v.manifest),
		Owners:      ows,
	}
}

// Redacted replaces every value of a Secret's data and stringData.
const Redacted = "<redacted>"

func (a *Analyzer) factValue(kind string, p Path, pr presence) any {
	if !pr.ok {
		return nil
	}
	if kind == "Secret" && len(p) > 0 && p[0].FieldName != nil && (*p[0].FieldName == "data" || *p[0].FieldName == "stringData") {
		return redact(pr.v)
	}
	return truncate(pr.v, a.maxValueLength)
}

func redact(v any) any {
	if m, ok := v.(map[string]any); ok {
		out := make(map[string]any, len(m))
		for k := range m {
			out[k] = Redacted
		}
		return out
	}
	return Redacted
}
