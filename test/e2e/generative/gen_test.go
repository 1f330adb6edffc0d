package generative_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// gen generates the steps of one sequence on one object from a seeded
// random source. It keeps a model of the object (what the next apply
// sends, whether it exists, is paused or being deleted, how many pod
// templates it had) that the runner updates with each step's outcome, so
// that it only generates commands that make sense.
type gen struct {
	rng *rand.Rand
	// self picks apply-hygiene's own writers (selfWriter), apart from rng
	// so that a seed's other steps stay what they were without them.
	self *rand.Rand
	o    object
	// manifest is what the next apply sends.
	manifest map[string]any
	// pending is the manifest before the last apply's mutation, put
	// back when that apply did not pass.
	pending                  map[string]any
	exists, deleting, paused bool
	// autoscaled reports whether kubectl autoscale made an HPA of it.
	autoscaled bool
	// lastApplied reports whether the object has last-applied.
	lastApplied bool
	// templates counts the pod templates the object had, for undo.
	templates int
	// envs are the variables people added with set env.
	envs []string
	// labels and annotations are the keys people added.
	labels, annotations []string
	// n numbers the generated values.
	n int
	// queue holds the steps a writer generated to follow it.
	queue []step
	// handingOver are the paths that the pending hand-over (kubectl
	// apply edit-last-applied, kubectl hygiene handover) drops from the
	// manifest once it passed.
	handingOver [][]string
	// offer is the hand-over that the last step's denial printed, if
	// any (the runner's).
	offer *handoverOffer
	// exemptUndo lets bob, whom no rule reviews, run half of the undos
	// (drawn from self): in the sequences where the periodic audit fixes.
	exemptUndo bool
}

func newGen(seed uint64, o object) *gen {
	return &gen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), self: rand.New(rand.NewPCG(seed^0x5e1f, seed)),
		o: o, manifest: runtime.DeepCopyJSON(o.manifest)}
}

// next is a fresh number for a generated value.
func (g *gen) next() int { g.n++; return g.n }

// container is the name of the manifest's first container.
func (g *gen) container() string {
	v, _ := framework.ContainersPath.Lookup(g.manifest)
	list, _ := v.([]any)
	if len(list) == 0 {
		return ""
	}
	first, _ := list[0].(map[string]any)
	name, _ := first["name"].(string)
	return name
}

// encode renders a manifest as JSON for -f -.
func encode(m map[string]any) string {
	raw, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("encoding a manifest: %v", err)) // a decoded manifest always encodes
	}
	return string(raw)
}

// apply is kubectl apply of the manifest by a person.
func (g *gen) apply(writer string) step {
	return step{Writer: writer, As: alice, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}, Stdin: encode(g.manifest)}
}

// step generates the next step: the creation while the object does not
// exist, the finalizer's removal while it is being deleted, else a writer
// of the catalogue that fits the object.
func (g *gen) step() step {
	switch {
	case len(g.queue) > 0:
		s := g.queue[0]
		g.queue = g.queue[1:]
		return s
	case !g.exists:
		return g.apply("kubectl apply (create)")
	case g.deleting:
		return g.removeFinalizer()
	}
	if s, ok := g.selfWriter(); ok {
		return s
	}
	if s, ok := g.exemptUndoStep(); ok {
		return s
	}
	var fit []writer
	total := 0
	for _, w := range slices.Concat(catalogue, moreWriters, everydayWriters, handoverWriters) {
		if w.fits == nil || w.fits(g) {
			fit = append(fit, w)
			total += w.weight
		}
	}
	pick := g.rng.IntN(total)
	for _, w := range fit {
		if pick < w.weight {
			s := w.make(g)
			if s.Writer == "" {
				s.Writer = w.name
			}
			return g.exempted(s)
		}
		pick -= w.weight
	}
	panic("unreachable: the weights add up to total")
}

// observe updates the model with the outcome of a step: whether it
// passed.
func (g *gen) observe(s step, passed bool) {
	if s.Kind == clientSideApply && s.As == alice || s.Writer == argoApply {
		if !passed && g.pending != nil {
			g.manifest = g.pending
		}
		g.pending = nil
	}
	if s.Writer == editLastApplied || s.Kind == handover {
		if passed {
			g.handedOver()
		}
		g.handingOver = nil
	}
	if !passed || s.Kind == hygiene {
		return
	}
	switch {
	case s.Kind == clientSideApply && !g.exists:
		g.exists, g.templates, g.lastApplied = true, 1, true
		g.envs, g.labels, g.annotations, g.paused = nil, nil, nil, false
	case s.Writer == editLastApplied || s.Kind == handover:
		// Last-applied alone: no new pod template.
	case s.Kind == clientSideApply || s.RewritesLastApplied:
		g.lastApplied = true
		g.templates++
	case s.Kind == deletion:
		g.deleting = true
	case s.Kind == finalizerRemoval:
		g.exists, g.deleting = false, false
		// The object is gone; the next one is created without the
		// finalizer, or a forced replace would wait for it.
		if meta, ok := g.manifest["metadata"].(map[string]any); ok {
			delete(meta, "finalizers")
		}
	case s.Writer == fluxCleanUp || s.Writer == dropLastApplied:
		g.lastApplied = false
	case s.Kind == dryRunUndo:
		// It writes nothing.
	case s.Writer == "kubectl replace":
		g.lastApplied = false
	case s.Writer == "kubectl rollout pause":
		g.paused = true
	case s.Writer == "kubectl rollout resume":
		g.paused = false
	case s.Writer == "kubectl autoscale" || s.Writer == "kubectl delete hpa":
		g.autoscaled = s.Writer == "kubectl autoscale"
	default:
		g.templates++
	}
}
