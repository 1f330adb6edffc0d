package generative_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// editLastApplied names the hand-over of a field with kubectl apply
// edit-last-applied, which the model follows.
const editLastApplied = "kubectl apply edit-last-applied (hand a field over)"

// handoverWriters are the writes of kubectl's documented hand-over of a
// field that the manifest stops managing (the replicas an autoscaler
// takes, a label or a key another writer keeps): the person deletes the
// field from the manifest and from last-applied with kubectl apply
// edit-last-applied, so that the next apply leaves it alone.
var handoverWriters = []writer{
	{name: editLastApplied, weight: 2, fits: func(g *gen) bool { return g.lastApplied && len(g.handOverable()) > 0 }, make: (*gen).editLastApplied},
	{name: followHandover, weight: 60, fits: func(g *gen) bool { return g.offeredFields() != nil }, make: (*gen).followHandover},
}

// followHandover names the person who does what a denial says: runs the
// kubectl hygiene handover it prints, drops the fields from the manifest,
// and runs the denied write again, which must pass.
const followHandover = "follow the denial's kubectl hygiene handover, then the denied write again"

// followHandover is the hand-over step (runHandover), with the denied
// write queued after it.
func (g *gen) followHandover() step {
	g.handingOver = g.offeredFields()
	g.queue = append(g.queue, g.offer.denied)
	return step{As: alice, Kind: handover, HandsOver: g.offer.paths}
}

// offeredFields are the manifest's fields that the offered hand-over
// names, when they are all fields a hand-over may take (handOverable, and
// a scalable kind's replicas that the manifest already dropped, as
// [replicas-reset]'s denial of its apply says): the manifest without
// them stays one the API server takes. Else nil.
func (g *gen) offeredFields() [][]string {
	if g.offer == nil {
		return nil
	}
	may := g.handOverable()
	if scalable(g) {
		may = append(may, []string{"spec", "replicas"})
	}
	var out [][]string
	for _, named := range g.offer.paths {
		i := slices.IndexFunc(may, func(p []string) bool { return framework.Path(p...).String() == named })
		if i < 0 {
			return nil
		}
		out = append(out, may[i])
	}
	return out
}

// editLastApplied is kubectl apply edit-last-applied whose editor deletes
// one field of the manifest from last-applied; the person's manifest
// loses it once the write passed (observe). One in three runs under a
// field manager of its own (ci-deployer), which the command's
// --field-manager allows.
func (g *gen) editLastApplied() step {
	paths := g.handOverable()
	p := paths[g.rng.IntN(len(paths))]
	s := person("apply", "edit-last-applied", g.o.ref(), "-o", "json")
	if g.rng.IntN(3) == 0 {
		s.Args = append(s.Args, "--field-manager=ci-deployer")
	}
	s.Edit, s.RewritesLastApplied = "del("+jqPath(p)+")", true
	g.handingOver = [][]string{p}
	return s
}

// handOverable lists the fields of the manifest that a hand-over may
// take: the replicas of a scalable kind, the object's own labels and
// annotations, a ConfigMap's keys. Never a selector or the pod
// template's labels, which the object needs.
func (g *gen) handOverable() [][]string {
	var out [][]string
	if _, ok := framework.ReplicasPath.Lookup(g.manifest); ok && scalable(g) {
		out = append(out, []string{"spec", "replicas"})
	}
	out = append(out, keysAt(g.manifest, "metadata", "labels")...)
	out = append(out, keysAt(g.manifest, "metadata", "annotations")...)
	if g.o.kind == "ConfigMap" {
		out = append(out, keysAt(g.manifest, "data")...)
	}
	return out
}

// keysAt lists the paths of the keys of the map at path in m, sorted.
func keysAt(m map[string]any, path ...string) [][]string {
	v, _ := framework.Path(path...).Lookup(m)
	inner, _ := v.(map[string]any)
	out := make([][]string, 0, len(inner))
	for _, k := range slices.Sorted(maps.Keys(inner)) {
		out = append(out, append(slices.Clone(path), k))
	}
	return out
}

// jqPath spells a path as jq's .["a"]["b"], which takes any key (a
// label's dots and slashes included).
func jqPath(p []string) string {
	var b strings.Builder
	b.WriteString(".")
	for _, k := range p {
		fmt.Fprintf(&b, "[%s]", quoted(k))
	}
	return b.String()
}

// handedOver drops the fields of the passed hand-over from the manifest.
func (g *gen) handedOver() {
	for _, p := range g.handingOver {
		framework.Path(p...).Delete(g.manifest)
	}
}
