package generative_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// ignoredLabel keeps apply-hygiene's webhooks away from a namespace.
const ignoredLabel = "apply-hygiene.io/ignore"

// replay runs step s of the sequence again on a copy of before (its spec,
// labels, annotations with last-applied, and managedFields) in a new
// namespace that the webhooks ignore, as the admin: the effect the write
// has without the webhooks. With reapply it then applies last-applied
// there, as the next apply of the same manifest would. It returns the copy
// after the write and after the apply, and whether the write passed.
func (r *runner) replay(i int, s step, before map[string]any, reapply bool) (effect, reapplied map[string]any, passed bool) {
	r.t.Helper()
	ns, done := r.copyIgnored(i, before)
	defer done()
	admin := r.f.Kubectl
	admin.Namespace = ns
	res := r.execute(admin, ns, s)
	effect = r.get(ns)
	if !reapply || res.ExitCode != 0 {
		return effect, nil, res.ExitCode == 0
	}
	manifest := lastApplied(before)
	if meta, ok := manifest["metadata"].(map[string]any); ok {
		delete(meta, "namespace") // kubectl apply records it; the copy lives elsewhere
		// What kubectl edit --save-config records of the object the server
		// keeps: sent back, resourceVersion makes the apply fail with a
		// conflict once a controller wrote the copy, and no manifest a
		// person applies has them.
		for _, k := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"} {
			delete(meta, k)
		}
	}
	delete(manifest, "status")
	la, _ := json.Marshal(manifest)
	admin.RunWithInput(r.t, string(la), "apply", "-f", "-").MustSucceed(r.t)
	return effect, r.get(ns), true
}

// copyIgnored creates a copy of obj (copyOf) in a new namespace that the
// webhooks ignore, for step i. It returns the namespace and a func that
// deletes it.
func (r *runner) copyIgnored(i int, obj map[string]any) (ns string, done func()) {
	r.t.Helper()
	ctx := context.Background()
	created, err := r.f.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "generative-replay-", Labels: map[string]string{ignoredLabel: "true"},
	}}, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatalf("creating a replay namespace: %v", err)
	}
	done = func() {
		if err := r.f.Client.CoreV1().Namespaces().Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
			r.t.Errorf("deleting %s: %v", created.Name, err)
		}
	}
	raw, err := json.Marshal(copyOf(obj))
	if err != nil {
		done()
		r.t.Fatalf("encoding the copy of %s: %v", r.o.ref(), err)
	}
	if _, err := r.f.Client.CoreV1().RESTClient().Post().AbsPath(r.urlPath(created.Name)).Body(raw).DoRaw(ctx); err != nil {
		done()
		r.t.Fatalf("step %d: copying %s into %s: %v", i+1, r.o.ref(), created.Name, err)
	}
	return created.Name, done
}

// copyOf is what a replay creates of obj: all but status and the metadata
// the server keeps, with managedFields, so that managers and conflicts
// stay what they were.
func copyOf(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if k != "status" && k != "metadata" {
			out[k] = v
		}
	}
	meta, _ := obj["metadata"].(map[string]any)
	kept := map[string]any{}
	for _, k := range []string{"name", "labels", "annotations", "managedFields"} {
		if v, ok := meta[k]; ok {
			kept[k] = v
		}
	}
	out["metadata"] = kept
	return out
}

// runRemedies runs, as the person, every command that the previous
// apply's orphaned-field warnings print, exactly as printed: each must
// change the object.
func (r *runner) runRemedies(i int) {
	k := r.as(alice)
	k.Namespace = "" // the command names it
	for path, cmd := range r.orphanCommands {
		words, err := shellSplit(cmd)
		if err != nil || len(words) < 2 || words[0] != "kubectl" {
			r.fail(i, "remedy-runs", falseWarning, "the printed command does not parse: %s", cmd)
			continue
		}
		before := r.get(r.f.Namespace)
		res := k.Run(r.t, words[1:]...)
		r.webhookErrors(i, res)
		r.judgeRemedy(i, path, cmd, res, before, r.get(r.f.Namespace))
	}
	r.orphanCommands = nil
}

// judgeRemedy judges the run of cmd, the command printed for path, on
// before (after is the object after it): it must change the object,
// unless its guard (its test operations) refuses an object that changed
// since the warning (r.warned) where the patch no longer applies (the
// periodic audit, or a step of kubectl hygiene audit --fix=apply, removed
// the orphan in between: pinned seed 37964, sequence 014; soak seed
// 271126, sequence 458).
func (r *runner) judgeRemedy(i int, path, cmd string, res framework.Result, before, after map[string]any) {
	switch {
	case res.ExitCode != 0 && strings.Contains(res.Stderr, patchTestFailed) && changedSinceWarned(r.warned, before) && !patchApplies(cmd, before):
		// The command's guard refuses, as it should, and nothing is
		// written.
	case res.ExitCode != 0:
		r.fail(i, "remedy-runs", falseWarning, "the command printed for %s fails: %s: %s", path, cmd, strings.TrimSpace(res.Stderr))
	case strings.Contains(res.Stdout, "(no change)"):
		r.fail(i, "remedy-changes", falseWarning, "the command printed for %s changes nothing: %s", path, cmd)
	default:
		r.remedied = append(r.remedied, path)
		r.record(step{As: alice}, before, after)
	}
}

// patchApplies reports whether the JSON patch that cmd passes with -p
// applies to obj, as the API server applies it (gopkg.in/evanphx/json-patch.v4):
// kubectl shows only patchTestFailed when it does not, so the test
// applies it itself to know why the server refused.
func patchApplies(cmd string, obj map[string]any) bool {
	words, err := shellSplit(cmd)
	if err != nil {
		return false
	}
	i := slices.Index(words, "-p")
	if i < 0 || i+1 >= len(words) {
		return false
	}
	patch, err := jsonpatch.DecodePatch([]byte(words[i+1]))
	if err != nil {
		return false
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		return false
	}
	_, err = patch.Apply(doc)
	return err == nil
}

// patchTestFailed is how kubectl shows that the API server refused a JSON
// patch that does not apply (a test operation that fails, a removal of a
// path that is gone): the server answers 422 and drops the patch's own
// error (apiserver's patch handler, NewGenericServerResponse).
const patchTestFailed = "the server rejected our request due to an error in our request"

// changedSinceWarned reports whether the object's spec, labels or
// annotations changed between warned (the object after the apply that
// printed the command) and now.
func changedSinceWarned(warned, now map[string]any) bool {
	for _, p := range []fieldPath{framework.Path("spec"), framework.Path("metadata", "labels"), framework.Path("metadata", "annotations")} {
		if !framework.SameAt(p, warned, now) {
			return true
		}
	}
	return false
}
