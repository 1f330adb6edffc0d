package generative_test

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// mutated returns a copy of the manifest with one change a person makes
// to a manifest between applies: an image, an environment variable, a
// label or an annotation added or removed, replicas or minReadySeconds
// changed, added or removed, a pod-template annotation, a ConfigMap key.
func (g *gen) mutated() map[string]any {
	m := runtime.DeepCopyJSON(g.manifest)
	n := g.next()
	var changes []func()
	changes = append(changes,
		func() {
			toggle(framework.EnsureMap(m, "metadata", "labels"), fmt.Sprintf("gen.example.com/m-%d", n), "v", g.rng.IntN(2) == 0)
		},
		func() {
			toggle(framework.EnsureMap(m, "metadata", "annotations"), fmt.Sprintf("gen.example.com/m-%d", n), "v", g.rng.IntN(2) == 0)
		},
	)
	if g.o.kind == "ConfigMap" {
		changes = append(changes, func() {
			toggle(framework.EnsureMap(m, "data"), fmt.Sprintf("gen-%d", n%4), fmt.Sprint(n), g.rng.IntN(3) == 0)
		})
	}
	if g.o.workload() {
		changes = append(changes,
			func() { firstContainer(m)["image"] = fmt.Sprintf("registry.example/manifest:%d", n) },
			func() { toggleEnv(firstContainer(m), fmt.Sprintf("GEN_MANIFEST_%d", n%3), fmt.Sprint(n)) },
			func() { toggle(framework.EnsureMap(m, "spec"), "minReadySeconds", float64(n%20), g.rng.IntN(2) == 0) },
			func() {
				toggle(framework.EnsureMap(m, "spec", "template", "metadata", "annotations"), "gen.example.com/t", fmt.Sprint(n), g.rng.IntN(3) == 0)
			},
		)
	}
	if g.o.kind == "Deployment" || g.o.kind == "StatefulSet" {
		changes = append(changes, func() { toggle(framework.EnsureMap(m, "spec"), "replicas", float64(1+n%3), g.rng.IntN(3) == 0) })
	}
	changes[g.rng.IntN(len(changes))]()
	return m
}

// toggle sets m[key] to v, or removes it when remove is true or it is
// the only way to change it.
func toggle(m map[string]any, key string, v any, remove bool) {
	if _, ok := m[key]; ok && remove {
		delete(m, key)
		return
	}
	m[key] = v
}

// toggleEnv adds the variable name to a container, or removes it when it
// is there.
func toggleEnv(container map[string]any, name, value string) {
	env, _ := container["env"].([]any)
	i := slices.IndexFunc(env, func(e any) bool { m, _ := e.(map[string]any); return m["name"] == name })
	if i >= 0 {
		container["env"] = slices.Delete(env, i, i+1)
		if len(env) == 1 {
			delete(container, "env")
		}
		return
	}
	container["env"] = append(env, map[string]any{"name": name, "value": value})
}

// firstContainer is the manifest's first container.
func firstContainer(m map[string]any) map[string]any {
	v, _ := framework.ContainersPath.Lookup(m)
	list, _ := v.([]any)
	c, _ := list[0].(map[string]any)
	return c
}
