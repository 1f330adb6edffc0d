package generative_test

import (
	"strings"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// createdObject is the object as its creation left it, with the manifest
// that created it: what the API server's defaulting added is in the one
// and not in the other.
type createdObject struct {
	spec, manifest map[string]any
}

// noteCreation keeps the object that step s created (a re-creation
// included) with its manifest; nil when it was created without one.
func (r *runner) noteCreation(s step, after map[string]any) {
	r.created = nil
	if m := decodeManifest(s.Stdin); m != nil && after != nil {
		r.created = &createdObject{spec: map[string]any{"spec": after["spec"]}, manifest: map[string]any{"spec": m["spec"]}}
	}
}

// staleCreationDefault reports whether g, an orphaned-field finding of a
// server-side apply of manifest at step i, names a field that the API
// server's defaulting set at the creation (in the created object, not in
// the creating manifest), that no writer of the sequence set since
// (r.fields) and after still has at that value, that manifest leaves out,
// that an Update entry of kubectl owns in after (ownedByKubectlUpdate), and that
// the API server would not give back if it were removed
// (restoredOnRemoval): no longer its default. Allowed, never required:
// kubectl's migration to server-side apply upgrades one entry of
// kubectl-client-side-apply, and a /scale to the count the object has
// splits that entry in two (TestScaleOfAnUnownedCountRecordsNoManager), so
// the creation's defaults stay with the entry the migration left, and no
// apply removes them; a plain kubectl replace that sends them back as it
// read them takes them over the same way. Once the manifest changed what
// they default from, they are orphans (seed 281152, sequence 030:
// imagePullPolicy Always, the default for minio/minio:latest, owned by
// kubectl-replace after a manifest moved the image to a tag; minimised, by
// kubectl-client-side-apply). The owner is what makes it one: a default
// that no entry owns (a re-creation by a server-side apply) or that a
// controller owns is none.
func (r *runner) staleCreationDefault(i int, g framework.Reported, manifest, after map[string]any) bool {
	if g.Rule != "orphaned-field" || r.created == nil {
		return false
	}
	// What the creation added to its manifest's spec: its defaults.
	for _, q := range changed(r.created.manifest, r.created.spec) {
		if q.String() != g.Path || !framework.SameAt(q, r.created.spec, after) {
			continue
		}
		_, inManifest := q.Lookup(manifest)
		_, inCreating := q.Lookup(r.created.manifest)
		_, setSince := r.fields[q.String()]
		if inManifest || inCreating || setSince || !ownedByKubectlUpdate(after, q) {
			return false
		}
		return !r.restoredOnRemoval(i, q, after)
	}
	return false
}

// movedToServerSide reports whether only Apply entries of obj own the
// last-applied annotation, as after kubectl apply --server-side or kubectl
// hygiene migrate --server-side, and no Update entry (kubectl apply's,
// create or replace --save-config's, a tool's client-side apply) does
// (generative seed 281154, sequence 016).
func movedToServerSide(obj map[string]any) bool {
	annotation := framework.Path("metadata", "annotations").Key(lastAppliedKey).String()
	recordedBy := func(op string) bool {
		return ownedBy(obj, func(_, operation string) bool { return operation == op })[annotation]
	}
	return recordedBy("Apply") && !recordedBy("Update")
}

// ownedByKubectlUpdate reports whether an Update entry of kubectl (a
// manager named kubectl…: client-side apply, replace, edit, set, patch,
// an older client under its file name) owns q in obj.
func ownedByKubectlUpdate(obj map[string]any, q fieldPath) bool {
	return ownedBy(obj, func(manager, operation string) bool {
		return strings.HasPrefix(manager, "kubectl") && operation == "Update"
	})[q.String()]
}
