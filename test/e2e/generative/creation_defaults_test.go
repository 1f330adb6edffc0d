package generative_test

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

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
// server-side apply of manifest, names a field that the API server's
// defaulting set at the creation (in the created object, not in the
// creating manifest), that after still has at that value, that manifest
// leaves out, and that the API server would no longer default to that
// value: it asks the server, with a dry-run creation of after without the
// field (serverDefault). Allowed, never required: kubectl's migration to
// server-side apply upgrades one entry of kubectl-client-side-apply, and a
// /scale to the count the object has splits that entry in two
// (TestScaleOfAnUnownedCountRecordsNoManager), so the creation's defaults
// stay with the entry the migration left, and no apply removes them; once
// the manifest changed what they default from, they are orphans (seed
// 281152, sequence 030: imagePullPolicy Always, the default for
// minio/minio:latest, after a manifest moved the image to a tag).
func (r *runner) staleCreationDefault(g framework.Reported, manifest, after map[string]any) bool {
	if g.Rule != "orphaned-field" || r.created == nil || r.serverDefault == nil {
		return false
	}
	// What the creation added to its manifest's spec: its defaults.
	for _, q := range changed(r.created.manifest, r.created.spec) {
		if q.String() != g.Path || !framework.SameAt(q, r.created.spec, after) {
			continue
		}
		_, inManifest := q.Lookup(manifest)
		_, inCreating := q.Lookup(r.created.manifest)
		if inManifest || inCreating {
			return false
		}
		live, _ := q.Lookup(after)
		def, ok, err := r.serverDefault(after, q)
		if err != nil {
			r.t.Logf("asking the API server for the default of %s: %v", q, err)
			return false
		}
		return !ok || !equality.Semantic.DeepEqual(def, live)
	}
	return false
}

// dryRunDefault is serverDefault on the sequence's API server: it creates
// a copy of obj without q, under another name, with kubectl create
// --dry-run=server, and returns what the server put at q.
func (r *runner) dryRunDefault(obj map[string]any, q fieldPath) (any, bool, error) {
	probe := runtime.DeepCopyJSON(obj)
	delete(probe, "status")
	name, _ := framework.Path("metadata", "name").Lookup(obj)
	probe["metadata"] = map[string]any{"name": fmt.Sprintf("%v-default-probe", name)}
	q.Delete(probe)
	raw, err := json.Marshal(probe)
	if err != nil {
		return nil, false, err
	}
	res := r.f.Kubectl.RunWithInput(r.t, string(raw), "create", "--dry-run=server", "-o", "json", "-n", r.f.Namespace, "-f", "-")
	if res.ExitCode != 0 {
		return nil, false, fmt.Errorf("kubectl create --dry-run=server: %s", res.Stderr)
	}
	var created map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &created); err != nil {
		return nil, false, err
	}
	v, ok := q.Lookup(created)
	return v, ok, nil
}
