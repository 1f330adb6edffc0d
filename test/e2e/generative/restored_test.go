package generative_test

import (
	"context"
	"encoding/json"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// restoredOnRemoval reports whether a write that removes obj's field q
// leaves it as it is: the API server gives it back the value it has (a
// default of the field, or one it derives from a sibling: imagePullPolicy
// Always next to an image tagged latest) or refuses the removal. Such a
// field is no orphan, whoever set it: the command an orphaned-field
// warning prints would change nothing. The API server decides: the
// removal runs as a server-side dry-run update of a copy of obj in a
// namespace the webhooks ignore, for step i. A list element is never
// restored. r.restored, when set, answers instead (table tests).
func (r *runner) restoredOnRemoval(i int, q fieldPath, obj map[string]any) bool {
	if r.restored != nil {
		return r.restored(q, obj)
	}
	want, ok := q.Lookup(obj)
	if !ok || q.Element() {
		return false
	}
	r.t.Helper()
	ns, done := r.copyIgnored(i, obj)
	defer done()
	removed := r.get(ns)
	if !q.Delete(removed) {
		return false
	}
	// Unconditional: the workload's controller writes the copy too.
	framework.Path("metadata", "resourceVersion").Delete(removed)
	raw, err := json.Marshal(removed)
	if err != nil {
		r.t.Fatalf("encoding the copy of %s: %v", r.o.ref(), err)
	}
	out, err := r.f.Client.CoreV1().RESTClient().Put().AbsPath(r.urlPath(ns)+"/"+r.o.name).Param("dryRun", "All").Body(raw).DoRaw(context.Background())
	if apierrors.IsInvalid(err) {
		// A removal the server refuses (422) leaves the field as it is:
		// the warning's command could only fail.
		return true
	}
	if err != nil {
		r.t.Fatalf("step %d: the dry run that removes %s from %s: %v", i+1, q, r.o.ref(), err)
	}
	var after map[string]any
	if err := json.Unmarshal(out, &after); err != nil {
		r.t.Fatalf("decoding the dry run on %s: %v", r.o.ref(), err)
	}
	got, ok := q.Lookup(after)
	return ok && cmp.Equal(want, got)
}
