package merge

import (
	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AnalyzeClientSideApply analyzes a write that is known to be a
// client-side apply (kubectl apply; field manager
// kubectl-client-side-apply) as AnalyzeUpdate analyzes an apply: with the
// new last-applied as the manifest and new as the result. Unlike
// AnalyzeUpdate it does so also when last-applied stayed the same: the
// apply of an unchanged manifest still puts back what drifted (seed 001),
// and those reverts are what the apply-reverts-drift rule reports.
func (a *Analyzer) AnalyzeClientSideApply(old, new *unstructured.Unstructured) (*Analysis, error) {
	return verified(a, "client-side apply analysis", func(a *Analyzer) (*Analysis, error) { return a.analyzeClientSideApply(old, new) })
}

func (a *Analyzer) analyzeClientSideApply(old, new *unstructured.Unstructured) (*Analysis, error) {
	an, original, parsed := a.updateAnalysis(old, new)
	raw, ok := new.GetAnnotations()[LastAppliedAnnotation]
	if !ok {
		return a.analyzeUpdate(old, new)
	}
	an, err := a.analyzeAppliedUpdate(old, new, original, parsed, an)
	if err != nil || raw != old.GetAnnotations()[LastAppliedAnnotation] {
		return an, err
	}
	if original != nil {
		an.Reverts = setBack(an.Reverts, new.GetKind(), new.Object, original.Object)
	}
	return an, nil
}

// setBack keeps the reverts of a write that left last-applied as it was
// (lastApplied, the manifest of that write) where the write ends with the
// manifest's value, or removes a field the manifest lacks: only those does
// it set back. Such a write is an apply of an unchanged manifest by the
// field manager it names, not by anything in it: kubectl set image
// --field-manager=kubectl-client-side-apply of a field that had drifted
// from a last-applied that an undo left stale writes a third value (soak
// seed 271126, sequence 172: "sets … image back to" a value the write did
// not set), as does a mutating webhook that rewrites the field after the
// apply's patch set it (a digest pin, a mesh injector's stamp that kubectl
// edit --save-config recorded in last-applied). Neither puts last-applied's
// value back. The value is compared as the API server stores it: inside an
// atomic value it adds defaults (heldWithDefaults), and a container's
// image with the digest a pinner appended is the image set back
// (digestPinned).
func setBack(reverts []FieldFact, kind string, result, lastApplied map[string]any) []FieldFact {
	if len(reverts) == 0 {
		return reverts
	}
	manifest := storedForm(kind, lastApplied)
	result = storedForm(kind, result)
	out := []FieldFact{}
	for _, f := range reverts {
		if m := at(manifest, f.Path); !m.ok || heldWithDefaults(result, f.Path, m, at(result, f.Path)) || digestPinned(f.Path, m, at(result, f.Path)) {
			out = append(out, f)
		}
	}
	return out
}

// analyzeAppliedUpdate analyzes an apply; original and parsed are old's
// last-applied (nil when there is none), shared and never changed.
func (a *Analyzer) analyzeAppliedUpdate(old, new, original *unstructured.Unstructured, parsed *parsedLastApplied, an *Analysis) (*Analysis, error) {
	an.Operation = "apply"
	if an.LastApplied.Status == LastAppliedInvalid {
		return an, nil
	}
	manifest, manifestParsed, err := a.parseLastApplied(new)
	if err != nil {
		return an, nil //nolint:nilerr // an unusable new annotation is reported by the next write
	}
	if manifest.GetAPIVersion() != new.GetAPIVersion() {
		// kubectl computed its patch in the manifest's version, and the
		// API server converted the object to another: not judged (see
		// sameVersion). The previous manifest's version does not matter:
		// kubectl uses it as it is, as the analysis does.
		return an, nil
	}
	in := applyInput{kind: new.GetKind(), live: old, manifest: manifest, result: new,
		originalParsed: parsed, manifestParsed: manifestParsed, liveManaged: lazyManagedFields(old)}
	if original != nil {
		in.original = original.Object
	}
	if err := a.analyzeApply(in, an); err != nil {
		return nil, err
	}
	listsReplaced := a.listsReplaced(in.live)
	// A Secret as stored, as analyzeApply compares it.
	in = in.asStored()
	an.Reverts = withoutAdmissionRemovals(an.Reverts, in, listsReplaced)
	reverts, err := a.withoutAdmissionChanges(an.Reverts, in, listsReplaced)
	if err != nil {
		return nil, err
	}
	an.Reverts = reverts
	return an, nil
}

// withoutAdmissionChanges drops the reverts of a field that the result
// still has, with another value, when the apply's patch cannot have
// touched it and the write did not take it over: neither the previous
// last-applied nor the manifest has it (nor sets it or an enclosing field
// to null, nor, when listsReplaced, holds the list it is in), and its
// owners in the result are its owners in live. The API server gives a
// write's manager every field the write itself changed before mutating
// admission, so a value that changed with its owners kept was changed by
// a mutating webhook after that (a mesh injector re-stamping its
// annotation on every write, after kubectl rollout undo copied the
// ReplicaSet's stamp under the manager kubectl), not by the apply. Owners
// are contentOwners: kubectl apply's empty f:annotations of live owns the
// map as it was, not the stamp in it, so its f:annotations of the result
// (the apply added last-applied) changes no owner of the stamp. A result
// without managedFields tells nothing and drops nothing.
func (a *Analyzer) withoutAdmissionChanges(reverts []FieldFact, in applyInput, listsReplaced bool) ([]FieldFact, error) {
	if len(reverts) == 0 {
		return reverts, nil
	}
	resultMfs, err := DecodeManagedFields(in.result)
	if err != nil || len(resultMfs) == 0 {
		return reverts, err
	}
	liveMfs, err := in.liveManaged.get()
	if err != nil {
		return nil, err
	}
	tvs, err := a.fieldSets(stored(in.result.Object))
	if err != nil {
		return nil, err
	}
	granular := granularIn(tvs[0])
	out := []FieldFact{}
	for _, f := range reverts {
		replacedList := listsReplaced && (inList(in.original, f.Path) || inList(in.manifest.Object, f.Path))
		untouched := !at(in.original, f.Path).ok && !at(in.manifest.Object, f.Path).ok &&
			!nulledIn(in.manifest.Object, f.Path) && !replacedList
		if untouched && at(in.result.Object, f.Path).ok && sameOwners(contentOwners(liveMfs, f.Path, granular), contentOwners(resultMfs, f.Path, granular)) {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// sameOwners reports whether a and b name the same managers with the
// same operations and subresources, whatever their times.
func sameOwners(a, b []Owner) bool {
	key := func(o Owner) string { return o.Manager + "\x00" + o.Operation + "\x00" + o.Subresource }
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, o := range a {
		seen[key(o)]++
	}
	for _, o := range b {
		if seen[key(o)] == 0 {
			return false
		}
		seen[key(o)]--
	}
	return true
}

// withoutAdmissionRemovals drops the reverts that remove a field that
// neither the previous last-applied nor the manifest has: apply deletes
// only what the previous manifest had, or what the manifest sets to null
// (itself or an enclosing field: a null map deletes every key), or what
// is inside a field the previous manifest had and the manifest drops
// (kubectl's patch sets that field to null: labels that a person added
// with kubectl label go with the labels map that the manifest no longer
// has), so a
// mutating webhook removed it, such as apply-hygiene's own prune of an
// orphan, not the apply. When listsReplaced (a JSON merge patch), the
// apply also removes what is inside a list that either has (inList).
func withoutAdmissionRemovals(reverts []FieldFact, in applyInput, listsReplaced bool) []FieldFact {
	out := []FieldFact{}
	for _, f := range reverts {
		if at(in.original, f.Path).ok || at(in.manifest.Object, f.Path).ok || at(in.result.Object, f.Path).ok ||
			nulledIn(in.manifest.Object, f.Path) || droppedEnclosing(in.original, in.manifest.Object, f.Path) ||
			listsReplaced && (inList(in.original, f.Path) || inList(in.manifest.Object, f.Path)) {
			out = append(out, f)
		}
	}
	return out
}

// droppedEnclosing reports whether a field enclosing p is in original and
// not in manifest: kubectl's three-way patch deletes it whole.
func droppedEnclosing(original, manifest map[string]any, p Path) bool {
	for i := 1; i < len(p); i++ {
		if at(original, p[:i]).ok && !at(manifest, p[:i]).ok {
			return true
		}
	}
	return false
}

// nulledIn reports whether obj sets p or a field enclosing it to null.
func nulledIn(obj map[string]any, p Path) bool {
	for i := 1; i <= len(p); i++ {
		if v := at(obj, p[:i]); v.ok && v.v == nil {
			return true
		}
	}
	return false
}

// digestPinned reports whether the stored value at p, a container's image,
// is the manifest's image pinned to a sha256 digest: the same repository
// and tag once both are normalized as the container runtime reads them
// (`nginx:1.27` is `docker.io/library/nginx:1.27`, an image without a tag
// is `:latest`), with a digest the manifest did not have. Kyverno's
// verifyImages with mutateDigest writes `docker.io/nginx:1.27@sha256:…`
// by default; other pinners append the digest alone. Either way the apply
// set the manifest's image and the pinner pinned it. A pinner that drops
// the tag, or moves the image to another registry, is not told apart.
func digestPinned(p Path, manifest, stored presence) bool {
	if len(p) == 0 || p[len(p)-1].FieldName == nil || *p[len(p)-1].FieldName != "image" {
		return false
	}
	m, ok1 := manifest.v.(string)
	s, ok2 := stored.v.(string)
	if !ok1 || !ok2 {
		return false
	}
	want, err := reference.ParseNormalizedNamed(m)
	if err != nil {
		return false
	}
	if _, digested := want.(reference.Digested); digested {
		return false
	}
	got, err := reference.ParseNormalizedNamed(s)
	if err != nil {
		return false
	}
	pinned, ok := got.(reference.Canonical)
	if !ok || pinned.Digest().Algorithm() != "sha256" {
		return false
	}
	return want.Name() == got.Name() && tagOf(want) == tagOf(got)
}

// tagOf is the tag of an image reference, "latest" when it names none.
func tagOf(n reference.Named) string {
	if t, ok := n.(reference.Tagged); ok {
		return t.Tag()
	}
	return "latest"
}
