package generative_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// moreWriters are the writers of issue 25's catalogue that the first
// catalogue lacked: kubectl apply -k and apply --prune -l, kubectl
// autoscale and its removal. The second mutating webhook (mesh_test.go)
// is no step: it stamps every write of every sequence.
var moreWriters = []writer{
	{name: "kubectl apply -k", weight: 3, make: func(g *gen) step {
		s := g.mutatedApply()
		s.Args = []string{"apply", "-k", kustomizeDir}
		return s
	}},
	{name: "kubectl apply --prune -l", weight: 2, make: (*gen).pruneApply},
	{name: "kubectl apply --prune -l of a set without the object", weight: 1, make: (*gen).pruneOthers},
	{name: "kubectl autoscale", weight: 2, fits: func(g *gen) bool { return scalable(g) && !g.autoscaled }, make: (*gen).autoscale},
	{name: "kubectl delete hpa", weight: 1, fits: func(g *gen) bool { return g.autoscaled }, make: func(g *gen) step {
		return person("delete", "horizontalpodautoscaler/"+g.o.name)
	}},
}

// kustomizeDir is the directory argument of kubectl apply -k: the runner
// writes the kustomization there from the step's manifest (kustomized).
const kustomizeDir = "kustomization/"

// kustomization is the kustomization.yaml of kubectl apply -k: the one
// manifest, nothing added (no prefix, labels or generators).
const kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- manifest.yaml\n"

// kustomized writes the kustomization of step s into a new directory and
// returns s with that directory as -k's argument; s unchanged for any
// other step.
func (r *runner) kustomized(s step) step {
	i := len(s.Args) - 1
	if i < 1 || s.Args[i-1] != "-k" || s.Args[i] != kustomizeDir {
		return s
	}
	doc, err := yaml.JSONToYAML([]byte(s.Stdin))
	if err != nil {
		r.t.Fatalf("rendering the kustomization's manifest: %v", err)
	}
	dir := r.t.TempDir()
	for name, content := range map[string][]byte{"kustomization.yaml": []byte(kustomization), "manifest.yaml": doc} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			r.t.Fatalf("writing the kustomization: %v", err)
		}
	}
	s.Args = append(append([]string{}, s.Args[:i]...), dir)
	s.Stdin = ""
	return s
}

// kustomizeScript is how a script writes the kustomization of step s
// before kubectl apply -k.
func kustomizeScript(s step) string {
	doc, err := yaml.JSONToYAML([]byte(s.Stdin))
	if err != nil {
		doc = []byte(s.Stdin)
	}
	return fmt.Sprintf("mkdir -p %[1]s\ncat > %[1]skustomization.yaml <<'EOF'\n%[2]sEOF\ncat > %[1]smanifest.yaml <<'EOF'\n%[3]sEOF\n",
		kustomizeDir, kustomization, doc)
}

// pruneLabel is the label that scopes kubectl apply --prune: only the
// objects a sequence applies carry it, and each sequence has a namespace
// of its own, which kubectl's pruning of namespaced kinds never leaves.
const (
	pruneLabel    = "gen.example.com/prune-set"
	pruneSelector = pruneLabel + "=gen"
	// pruneAnchor is the object of the set a prune applies without the
	// sequence's object.
	pruneAnchor = "gen-prune-anchor"
)

// pruneArgs are kubectl apply --prune's arguments: the selector, and an
// allowlist of the object's kind and the anchor's (ConfigMap), so that no
// cluster-scoped kind of kubectl's default allowlist is a candidate.
func (g *gen) pruneArgs() []string {
	gv, _ := g.manifest["apiVersion"].(string)
	if !strings.Contains(gv, "/") {
		gv = "core/" + gv
	}
	return []string{"apply", "--prune", "-l", pruneSelector,
		"--prune-allowlist=" + gv + "/" + g.o.kind, "--prune-allowlist=core/v1/ConfigMap", "-f", "-"}
}

// pruneApply is kubectl apply --prune -l of the manifest, which carries
// the label: the object is in the set, so kubectl prunes nothing of it.
func (g *gen) pruneApply() step {
	g.pending = runtime.DeepCopyJSON(g.manifest)
	framework.EnsureMap(g.manifest, "metadata", "labels")[pruneLabel] = "gen"
	s := g.apply("")
	s.Args = g.pruneArgs()
	return s
}

// pruneOthers is kubectl apply --prune -l of a set that has only the
// anchor: kubectl deletes the object when its live labels match the
// selector and it has last-applied (it prunes only what apply created),
// which the runner checks (judgePrune).
func (g *gen) pruneOthers() step {
	anchor := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": pruneAnchor, "labels": map[string]any{pruneLabel: "gen"}}}
	return step{As: alice, Kind: deletion, Args: g.pruneArgs(), Stdin: encode(anchor)}
}

// prunesOthers reports whether s is pruneOthers's step.
func (s step) prunesOthers() bool {
	return s.Kind == deletion && len(s.Args) > 1 && s.Args[1] == "--prune"
}

// judgePrune checks what kubectl apply --prune -l of a set without the
// object did to it: deleted (or, held by a finalizer, being deleted)
// exactly when before matched the selector and had last-applied.
func (r *runner) judgePrune(i int, s step, res framework.Result, before, after map[string]any) {
	if !s.prunesOthers() || res.ExitCode != 0 || before == nil {
		return
	}
	label, _ := framework.Path("metadata", "labels").Key(pruneLabel).Lookup(before)
	want := label == "gen" && lastApplied(before) != nil
	_, deleting := framework.Path("metadata", "deletionTimestamp").Lookup(after)
	if got := after == nil || deleting; got != want {
		r.fail(i, "prune-deletes", "", "kubectl apply --prune -l %s deleted the object: %v, want %v (label %v, last-applied %v)",
			pruneSelector, got, want, label, lastApplied(before) != nil)
	}
}
