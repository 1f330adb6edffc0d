package realworld_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The fields the day plants outside apply.
const (
	addedEnv    = "HYGIENE_ADDED"
	restartedAt = "kubectl.kubernetes.io/restartedAt"
	// deniedImage is what kubectl set image tries to set.
	deniedImage = "registry.example/apply-hygiene:denied"
)

// rolledBack are the kinds whose day has rollout undo and scale.
var rolledBack = map[string]bool{"Deployment": true, "StatefulSet": true}

// day is the life of a corpus workload, step by step, in order.
var day = []struct {
	step string
	// rolledBackOnly limits the step to the kinds of rolledBack.
	rolledBackOnly bool
	do             func(l *life, step string)
}{
	{step: "create", do: (*life).create},
	{step: "change and apply", do: (*life).changedApplyStep},
	{step: "rollout restart", do: (*life).restart},
	{step: "apply after rollout restart", do: (*life).changedApplyStep},
	{step: "set env", do: (*life).setEnv},
	{step: "apply after set env", do: (*life).changedApplyStep},
	{step: "set image of an owned container", do: (*life).setImage},
	{step: "rollout undo", rolledBackOnly: true, do: (*life).undo},
	{step: "apply after rollout undo", rolledBackOnly: true, do: (*life).applyStep},
	{step: "scale", rolledBackOnly: true, do: (*life).scale},
	{step: "apply after scale", rolledBackOnly: true, do: (*life).changedApplyStep},
}

// liveDay takes one workload through its day in a namespace of its own,
// with p predicting each apply.
func liveDay(t *testing.T, w workload, lg *ledger, p *framework.Predictor) {
	lg.started(w)
	l := &life{t: t, f: framework.New(t), w: w, ledger: lg, manifest: runtime.DeepCopyJSON(w.manifest)}
	l.predict = func(step string, manifest []byte) func(framework.Result) { return l.predictWith(p, step, manifest) }
	for _, s := range day {
		if s.rolledBackOnly && !rolledBack[w.kind] {
			continue
		}
		s.do(l, s.step)
	}
}

// create applies the manifest to a new object: nothing to report. The day
// ends here when the object could not be created.
func (l *life) create(step string) {
	if res := l.apply(step); res.ExitCode != 0 {
		l.t.Fatalf("%s: could not create %s; the rest of its day is skipped", l.w.id(), l.w.ref())
	}
}

func (l *life) applyStep(step string)        { l.apply(step) }
func (l *life) changedApplyStep(step string) { l.changedApply(step) }

// restart runs kubectl rollout restart: nothing to report; it plants
// restartedAt in the pod template.
func (l *life) restart(step string) {
	res := l.run(step, nothing, "", "rollout", "restart", l.w.ref())
	if res.ExitCode == 0 {
		l.plant(templatePath.Key("metadata").Key("annotations").Key(restartedAt))
	}
}

// container is the name of the workload's first container.
func (l *life) container() string {
	v, _ := containersPath.Lookup(l.w.manifest)
	list, _ := v.([]any)
	if len(list) == 0 {
		l.t.Fatalf("%s has no containers", l.w.id())
	}
	first, _ := list[0].(map[string]any)
	name, _ := first["name"].(string)
	return name
}

// setEnv adds a variable to the first container with kubectl set env:
// nothing to report; it plants the variable.
func (l *life) setEnv(step string) {
	c := l.container()
	res := l.run(step, nothing, "", "set", "env", l.w.ref(), "-c", c, addedEnv+"=1")
	if res.ExitCode == 0 {
		l.plant(containersPath.Named(c).Key("env").Named(addedEnv))
	}
}

// setImage changes the image of the first container, which last-applied
// owns, with kubectl set image: denied, and nothing written.
func (l *life) setImage(step string) {
	image := containersPath.Named(l.container()).Key("image")
	l.deniedWrite(step, image, "set", "image", l.w.ref(), l.container()+"="+deniedImage)
}

// deniedWrite runs a write that a correct tool denies with imperative-edit
// at p, and checks that the object is unchanged. A write that went through
// plants p.
func (l *life) deniedWrite(step string, p fieldPath, args ...string) {
	before := l.live()
	res := l.run(step, expectation{Want: []finding{edit(p)}}, "", args...)
	after := l.live()
	switch {
	case res.ExitCode == 0:
		l.plant(p)
	case !sameAt(specPath, before, after) || !sameAt(generationPath, before, after):
		l.t.Errorf("%s: step %q: the denied write changed the spec", l.w.id(), step)
	}
}

// undo runs kubectl rollout undo once the controller has recorded the
// current revision: never denied; a stale-last-applied warning allowed. It
// plants every field of the pod template the undo changed.
func (l *life) undo(step string) {
	l.waitObserved()
	before := l.live()
	res := l.f.Kubectl.Run(l.t, "rollout", "undo", l.w.ref())
	after := l.live()
	want, changed := afterUndo(before, after)
	check(l.t, l.ledger, l.object(), step, want, res)
	for _, p := range changed {
		l.plant(p)
	}
}

// scale runs kubectl scale: denied with imperative-edit when the manifest
// has replicas (last-applied owns them), allowed without a word when it
// has none (the documented hand-over to scale or an autoscaler).
func (l *life) scale(step string) {
	replicas := "--replicas=3"
	if v, _ := replicasPath.Lookup(l.live()); v == float64(3) {
		replicas = "--replicas=4"
	}
	args := []string{"scale", l.w.ref(), replicas}
	if v, owned := replicasPath.Lookup(l.manifest); owned && v != nil {
		l.deniedWrite(step, replicasPath, args...)
		return
	}
	l.run(step, nothing, "", args...)
}
