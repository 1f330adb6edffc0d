package generative_test

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// writer is one entry of the catalogue: a step generator.
type writer struct {
	name string
	// weight is how often it is picked among the writers that fit.
	weight int
	// fits reports whether the writer can write the object now; nil
	// for always.
	fits func(g *gen) bool
	make func(g *gen) step
}

// Writers the model follows by name.
const (
	argoApply   = "Argo CD apply (argocd-controller)"
	fluxCleanUp = "Flux last-applied clean-up"
)

func workload(g *gen) bool   { return g.o.workload() }
func scalable(g *gen) bool   { return g.o.kind == "Deployment" || g.o.kind == "StatefulSet" }
func deployment(g *gen) bool { return g.o.kind == "Deployment" }

// catalogue lists every writer: kubectl's commands that write, run by a
// person, and the writers that are not people, each under its identity.
var catalogue = []writer{
	{name: "kubectl apply", weight: 14, make: (*gen).mutatedApply},
	{name: "kubectl apply --overwrite=false", weight: 1, make: func(g *gen) step {
		// kubectl refuses the apply when it would overwrite a change made
		// since the last apply.
		s := g.mutatedApply()
		s.Args = []string{"apply", "--overwrite=false", "-f", "-"}
		return s
	}},
	{name: "kubectl apply --field-manager=ci-deployer", weight: 2, make: func(g *gen) step {
		// A pipeline's client-side apply under a field manager of its
		// own: the same three-way patch and last-applied, the write's
		// managedFields entry under another name than kubectl apply's.
		s := g.mutatedApply()
		s.Args = []string{"apply", "--field-manager=ci-deployer", "-f", "-"}
		return s
	}},
	{name: "kubectl apply --server-side --force-conflicts --field-manager=platform", weight: 2, make: func(g *gen) step {
		return ssa(alice, "platform", g.mutated())
	}},
	{name: "kubectl apply --dry-run=server", weight: 2, make: func(g *gen) step {
		return step{As: alice, Kind: dryRunApply, Args: []string{"apply", "--dry-run=server", "-f", "-"}, Stdin: encode(g.mutated())}
	}},
	{name: "kubectl edit", weight: 3, make: func(g *gen) step { return g.edit(false) }},
	{name: "kubectl edit --save-config", weight: 2, make: func(g *gen) step { return g.edit(true) }},
	{name: "kubectl patch --type=strategic", weight: 3, make: (*gen).strategicPatch},
	{name: "kubectl patch --type=merge", weight: 2, make: (*gen).mergePatch},
	{name: "kubectl patch --type=json", weight: 2, make: (*gen).jsonPatch},
	{name: "kubectl set image", weight: 3, fits: workload, make: func(g *gen) step {
		args := []string{"set", "image", g.o.ref(), fmt.Sprintf("%s=registry.example/set:%d", g.container(), g.next())}
		if g.rng.IntN(3) == 0 {
			// A write under an applier's name is still an edit.
			args = append(args, "--field-manager=kubectl-client-side-apply")
		}
		return person(args...)
	}},
	{name: "kubectl set env", weight: 4, fits: workload, make: (*gen).setEnv},
	{name: "kubectl set resources", weight: 2, fits: workload, make: func(g *gen) step {
		return person("set", "resources", g.o.ref(), "-c", g.container(), fmt.Sprintf("--requests=cpu=%dm", 10*g.next()))
	}},
	{name: "kubectl set serviceaccount", weight: 1, fits: workload, make: func(g *gen) step {
		return person("set", "serviceaccount", g.o.ref(), fmt.Sprintf("gen-%d", g.next()))
	}},
	{name: "kubectl label", weight: 3, make: func(g *gen) step { return g.metadata("label", "labels", &g.labels) }},
	{name: "kubectl annotate", weight: 3, make: func(g *gen) step { return g.metadata("annotate", "annotations", &g.annotations) }},
	{name: "kubectl scale", weight: 4, fits: scalable, make: func(g *gen) step {
		return person("scale", g.o.ref(), fmt.Sprintf("--replicas=%d", g.rng.IntN(5)))
	}},
	{name: "kubectl rollout restart", weight: 3, fits: workload, make: func(g *gen) step {
		return person("rollout", "restart", g.o.ref())
	}},
	{name: "kubectl rollout undo", weight: 3, fits: func(g *gen) bool { return workload(g) && g.templates >= 2 && !g.paused }, make: func(g *gen) step {
		s := person("rollout", "undo", g.o.ref())
		if g.rng.IntN(3) == 0 {
			s.Args = append(s.Args, "--to-revision=1")
		}
		s.Kind = undo
		return s
	}},
	{name: "kubectl rollout pause", weight: 1, fits: func(g *gen) bool { return deployment(g) && !g.paused }, make: func(g *gen) step {
		return person("rollout", "pause", g.o.ref())
	}},
	{name: "kubectl rollout resume", weight: 3, fits: func(g *gen) bool { return deployment(g) && g.paused }, make: func(g *gen) step {
		return person("rollout", "resume", g.o.ref())
	}},
	{name: "kubectl replace --save-config", weight: 1, make: func(g *gen) step {
		s := person("replace", "--save-config", "-f", "-")
		s.Stdin, s.RewritesLastApplied = encode(g.manifest), true
		return s
	}},
	{name: "kubectl replace", weight: 1, make: func(g *gen) step {
		s := person("replace", "-f", "-")
		s.Stdin = encode(g.manifest)
		return s
	}},
	{name: "kubectl replace --force --save-config", weight: 1, make: func(g *gen) step {
		s := person("replace", "--force", "--save-config", "-f", "-")
		s.Stdin, s.RewritesLastApplied = encode(g.manifest), true
		return s
	}},
	{name: "a finalizer controller holds the object, kubectl delete --wait=false", weight: 1, make: (*gen).deleteHeld},
	{name: "follow the orphaned-field warnings' commands", weight: 4, make: func(g *gen) step {
		// Then the same apply: the findings must not come back.
		g.queue = append(g.queue, g.apply("kubectl apply (after the remedies)"))
		return step{As: alice, Kind: remedy}
	}},

	// Writers that are not people.
	{name: "autoscaler scales through /scale", weight: 3, fits: scalable, make: func(g *gen) step {
		return as(robot, "scale", g.o.ref(), fmt.Sprintf("--replicas=%d", g.rng.IntN(6)))
	}},
	{name: "KEDA-like operator scales to zero and back", weight: 2, fits: scalable, make: func(g *gen) step {
		return as(keda, "scale", g.o.ref(), fmt.Sprintf("--replicas=%d", g.rng.IntN(2)))
	}},
	{name: "Reloader stamps the pod template", weight: 2, fits: workload, make: func(g *gen) step {
		patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"reloader.stakater.com/last-reloaded-from":"configmap-%d"}}}}}`, g.next())
		return as(robot, "patch", g.o.ref(), "--type=strategic", "--field-manager=reloader", "-p", patch)
	}},
	{name: "Keel-like image updater sets a newer image", weight: 2, fits: workload, make: func(g *gen) step {
		// Keel reads the object, sets the image and writes it back with
		// client-go under its own field manager: on the wire the change
		// of a JSON patch.
		patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/keel:%d"}]`, g.next())
		return as(robot, "patch", g.o.ref(), "--type=json", "--field-manager=keel", "-p", patch)
	}},
	{name: argoApply, weight: 2, make: func(g *gen) step {
		s := as(argocd, "apply", "--field-manager=argocd-controller", "-f", "-")
		s.Kind, s.Stdin = clientSideApply, encode(g.manifest)
		return s
	}},
	{name: "Argo CD server-side apply", weight: 1, make: func(g *gen) step { return ssa(argocd, "argocd-controller", g.manifest) }},
	{name: "Argo CD Replace=true", weight: 1, make: func(g *gen) step {
		s := as(argocd, "replace", "--save-config", "-f", "-")
		s.Stdin, s.RewritesLastApplied = encode(g.manifest), true
		return s
	}},
	{name: "Flux kustomize-controller server-side apply", weight: 2, make: func(g *gen) step {
		return toolApply(flux, "kustomize-controller", g.manifest)
	}},
	{name: "Flux helm-controller server-side apply", weight: 1, make: func(g *gen) step {
		return toolApply(flux, "helm-controller", g.manifest)
	}},
	{name: fluxCleanUp, weight: 1, fits: func(g *gen) bool { return g.lastApplied }, make: func(g *gen) step {
		return as(flux, "patch", g.o.ref(), "--type=json", "--field-manager=kustomize-controller",
			"-p", `[{"op":"remove","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"}]`)
	}},
	{name: "Helm 3 upgrade (three-way patch)", weight: 2, make: (*gen).helm3},
	{name: "Helm 4 upgrade (server-side apply)", weight: 1, make: func(g *gen) step {
		return toolApply(helmCI, "helm", map[string]any{
			"apiVersion": g.manifest["apiVersion"], "kind": g.o.kind,
			"metadata": map[string]any{"name": g.o.name, "labels": map[string]any{"app.kubernetes.io/managed-by": "Helm"},
				"annotations": map[string]any{"meta.helm.sh/release-name": "gen"}},
		})
	}},
}

// person is a command run by alice.
func person(args ...string) step { return step{As: alice, Kind: write, Args: args} }

// as is a command run by a writer that is not a person.
func as(w who, args ...string) step { return step{As: w, Kind: write, Args: args} }

// ssa is kubectl apply --server-side --force-conflicts of m under a field
// manager, as a GitOps controller or a person applies server-side.
func ssa(w who, manager string, m map[string]any) step {
	return step{As: w, Kind: serverSideApply, Args: []string{"apply", "--server-side", "--force-conflicts", "--field-manager=" + manager, "-f", "-"}, Stdin: encode(m)}
}

// toolApply is a server-side apply with force of m under a field manager
// as a tool that is not kubectl sends it (Helm 4, Flux: client-go), so
// without kubectl's migration of client-side apply's fields to the
// manager (Argo CD's server-side apply runs kubectl's apply code: ssa).
func toolApply(w who, manager string, m map[string]any) step {
	s := ssa(w, manager, m)
	s.Manager = manager
	return s
}

// mutatedApply changes the manifest and applies it.
func (g *gen) mutatedApply() step {
	g.pending = runtime.DeepCopyJSON(g.manifest)
	if g.rng.IntN(5) > 0 {
		g.manifest = g.mutated()
	}
	return g.apply("")
}

// edit is the real kubectl edit (-o json), with --save-config or
// without: its editor rewrites the one field with jq, kubectl computes
// and sends the patch under kubectl-edit, and with --save-config it
// records the whole edited object as last-applied.
func (g *gen) edit(saveConfig bool) step {
	_, filter := g.someChange(true)
	s := person("edit", g.o.ref(), "-o", "json")
	if saveConfig {
		s.Args = append(s.Args, "--save-config")
	}
	s.Edit, s.RewritesLastApplied = filter, saveConfig
	return s
}

// someChange is a patch of one field, an owned one (an image, a label or
// a value of the manifest) or a new one, and the same change as a jq
// filter on the object. Only a strategic patch may change an image: a
// merge patch would replace the list of containers.
func (g *gen) someChange(strategic bool) (patch map[string]any, filter string) {
	n := g.next()
	switch {
	case strategic && g.o.workload() && g.rng.IntN(2) == 0:
		c, image := g.container(), fmt.Sprintf("registry.example/edit:%d", n)
		patch = map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": c, "image": image}}}}}}
		filter = fmt.Sprintf(`.spec.template.spec.containers |= map(if .name == %s then .image = %s else . end)`, quoted(c), quoted(image))
		return patch, filter
	case g.o.kind == "ConfigMap":
		key, value := g.someKey("data"), fmt.Sprintf("edited %d", n)
		return map[string]any{"data": map[string]any{key: value}}, fmt.Sprintf(".data[%s] = %s", quoted(key), quoted(value))
	}
	key, value := g.someKey("metadata", "labels"), fmt.Sprint(n)
	return map[string]any{"metadata": map[string]any{"labels": map[string]any{key: value}}},
		fmt.Sprintf(".metadata.labels[%s] = %s", quoted(key), quoted(value))
}

// quoted is s as a JSON (and jq) string.
func quoted(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// someKey is a key the manifest has at keys, or a new one.
func (g *gen) someKey(keys ...string) string {
	m := g.manifest
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	var have []string
	for k := range m {
		have = append(have, k)
	}
	slices.Sort(have)
	if len(have) > 0 && g.rng.IntN(2) == 0 {
		return have[g.rng.IntN(len(have))]
	}
	return fmt.Sprintf("gen.example.com/k-%d", g.next())
}

func (g *gen) strategicPatch() step {
	n := g.next()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"gen.example.com/s-%d":"v"}}}`, n)
	if g.o.workload() {
		switch g.rng.IntN(3) {
		case 0:
			patch = fmt.Sprintf(`{"spec":{"minReadySeconds":%d}}`, n%30)
		case 1:
			patch = fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"gen.example.com/s":"%d"}}}}}`, n)
		}
	}
	return person("patch", g.o.ref(), "--type=strategic", "-p", patch)
}

func (g *gen) mergePatch() step {
	patch, _ := g.someChange(false)
	raw, _ := json.Marshal(patch)
	return person("patch", g.o.ref(), "--type=merge", "-p", string(raw))
}

func (g *gen) jsonPatch() step {
	n := g.next()
	patch := fmt.Sprintf(`[{"op":"add","path":"/metadata/labels/gen.example.com~1j-%d","value":"v"}]`, n)
	if g.o.workload() && g.rng.IntN(2) == 0 {
		patch = fmt.Sprintf(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/json:%d"}]`, n)
	}
	return person("patch", g.o.ref(), "--type=json", "-p", patch)
}

// setEnv adds a variable with kubectl set env, or removes one that a
// person added.
func (g *gen) setEnv() step {
	c := g.container()
	if len(g.envs) > 0 && g.rng.IntN(3) == 0 {
		i := g.rng.IntN(len(g.envs))
		name := g.envs[i]
		g.envs = slices.Delete(g.envs, i, i+1)
		return person("set", "env", g.o.ref(), "-c", c, name+"-")
	}
	name := fmt.Sprintf("GEN_SET_%d", g.next())
	g.envs = append(g.envs, name)
	return person("set", "env", g.o.ref(), "-c", c, name+"=1")
}

// metadata is kubectl label or annotate: add, --overwrite or remove.
func (g *gen) metadata(verb, field string, added *[]string) step {
	n := g.next()
	switch {
	case len(*added) > 0 && g.rng.IntN(3) == 0:
		i := g.rng.IntN(len(*added))
		key := (*added)[i]
		*added = slices.Delete(*added, i, i+1)
		return person(verb, g.o.ref(), key+"-")
	case g.rng.IntN(3) == 0:
		return person(verb, g.o.ref(), "--overwrite", fmt.Sprintf("%s=o%d", g.someKey("metadata", field), n))
	}
	key := fmt.Sprintf("gen.example.com/%s-%d", verb, n)
	*added = append(*added, key)
	return person(verb, g.o.ref(), key+"=v")
}

// deleteHeld is a finalizer controller's finalizer on the object, then
// kubectl delete --wait=false (with a cascade) by a person: the next step
// removes the finalizer.
func (g *gen) deleteHeld() step {
	cascade := []string{"background", "orphan", "foreground"}[g.rng.IntN(3)]
	g.queue = append(g.queue, step{Writer: "kubectl delete --wait=false --cascade=" + cascade, As: alice, Kind: deletion,
		Args: []string{"delete", g.o.ref(), "--wait=false", "--cascade=" + cascade}})
	if g.rng.IntN(2) == 0 {
		// The manifest declares the finalizer: last-applied owns it.
		g.pending = runtime.DeepCopyJSON(g.manifest)
		framework.EnsureMap(g.manifest, "metadata")["finalizers"] = []any{heldBy}
		s := g.apply("kubectl apply of a manifest with a finalizer")
		return s
	}
	return as(robot, "patch", g.o.ref(), "--type=merge", "--field-manager=gen-finalizer-controller",
		"-p", `{"metadata":{"finalizers":["`+heldBy+`"]}}`)
}

// removeFinalizer is the finalizer's removal from the object being
// deleted, by a person, the finalizer controller or the garbage
// collector's account.
func (g *gen) removeFinalizer() step {
	w := []who{alice, robot, gc}[g.rng.IntN(3)]
	s := as(w, "patch", g.o.ref(), "--type=strategic", "-p", `{"metadata":{"$deleteFromPrimitiveList/finalizers":["`+heldBy+`"]}}`)
	s.Kind, s.Writer = finalizerRemoval, "the finalizer is removed from the object being deleted"
	return s
}

// heldBy is the finalizer of the finalizer controller.
const heldBy = "gen.example.com/hold"

// helm3 is helm upgrade's three-way patch under the field manager helm:
// the release's labels and annotations and a checksum of its values.
func (g *gen) helm3() step {
	n := g.next()
	patch := map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": fmt.Sprintf("gen-0.%d.0", n)},
		"annotations": map[string]any{"meta.helm.sh/release-name": "gen", "meta.helm.sh/release-namespace": "."},
	}}
	if g.o.workload() {
		patch["spec"] = map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": map[string]any{"checksum/config": fmt.Sprint(n)}}}}
	}
	raw, _ := json.Marshal(patch)
	return as(helmCI, "patch", g.o.ref(), "--type=strategic", "--field-manager=helm", "-p", string(raw))
}
