package generative_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// hpaController is kube-controller-manager's horizontal pod autoscaler
// (--use-service-account-credentials names its account).
const hpaController who = "horizontal-pod-autoscaler"

// autoscale is kubectl autoscale of the object by a person: a real
// HorizontalPodAutoscaler with bounds that the other writers' replicas
// (0 to 5) cross both ways.
func (g *gen) autoscale() step {
	lo := 1 + g.rng.IntN(3)
	hi := lo + g.rng.IntN(3)
	return person("autoscale", g.o.ref(), fmt.Sprintf("--min=%d", lo), fmt.Sprintf("--max=%d", hi), "--cpu=80%")
}

// autoscaler is the runner's model of the HorizontalPodAutoscaler that
// kubectl autoscale created, from the command's bounds. Without metrics
// (the control plane has no metrics API) kube-controller-manager's
// controller never computes a metric recommendation, but it still
// enforces the bounds through /scale (reconcileAutoscaler): replicas
// above max go to max; replicas below min go up, to the highest of min
// and its recommendations of the last five minutes (the downscale
// stabilization window: its first reconcile records the replicas it
// found, each clamp its result), within max and its scale-up limit
// (twice the replicas, at least 4); replicas 0 disable it (scaling is
// off while the target has none).
type autoscaler struct {
	min, max int
	// recommendations are the controller's, with when it made them.
	recommendations []recommendation
}

type recommendation struct {
	replicas int
	at       time.Time
}

// stabilization is the controller's downscale stabilization window
// (--horizontal-pod-autoscaler-downscale-stabilization), and
// stabilizationSlack the uncertainty of when it read the replicas.
const (
	stabilization      = 5 * time.Minute
	stabilizationSlack = 30 * time.Second
)

// outOfBounds reports whether the controller will change replicas n.
func (a *autoscaler) outOfBounds(n int) bool { return n > 0 && (n < a.min || n > a.max) }

// allowed are the replicas the controller may set from n: max above it;
// below min, min (kube-controller-manager v1.37's reconcileAutoscaler
// sets a count below minReplicas to minReplicas without computing metrics
// or reading its recommendations: soak seed 271126, sequence 723 scaled 1
// to its min 2 a minute after a clamp to max 4) or what the stabilization
// window gives, with the window's edge read either way (as seen before).
func (a *autoscaler) allowed(n int, now time.Time) []int {
	if n > a.max {
		return []int{a.max}
	}
	out := []int{a.min}
	for _, window := range []time.Duration{stabilization - stabilizationSlack, stabilization + stabilizationSlack} {
		want := a.min
		for _, r := range a.recommendations {
			if now.Sub(r.at) < window {
				want = max(want, r.replicas)
			}
		}
		want = min(want, a.max, max(2*n, 4))
		if !slices.Contains(out, want) {
			out = append(out, want)
		}
	}
	return out
}

// replicasOf is obj's spec.replicas; -1 for none.
func replicasOf(obj map[string]any) int {
	v, ok := framework.ReplicasPath.Lookup(obj)
	f, _ := v.(float64)
	if !ok {
		return -1
	}
	return int(f)
}

// afterAutoscale models the autoscaler once kubectl autoscale of step i
// passed, and returns the object as the step is judged: kubectl
// autoscale does not write the object, but the controller reconciles a
// new autoscaler at once, so its clamp may already be in the object read
// after the command. That clamp is the controller's write (recorded as
// such, and the step judged from the clamped object); one still to come
// is awaited (settleAutoscaler). before for any other step.
func (r *runner) afterAutoscale(i int, s step, res framework.Result, before map[string]any) map[string]any {
	if res.ExitCode != 0 || len(s.Args) == 0 || s.Args[0] != "autoscale" || before == nil {
		return before
	}
	a := &autoscaler{}
	for _, arg := range s.Args {
		if v, ok := strings.CutPrefix(arg, "--min="); ok {
			a.min, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(arg, "--max="); ok {
			a.max, _ = strconv.Atoi(v)
		}
	}
	// Its first reconcile records the replicas it finds.
	a.recommendations = []recommendation{{replicasOf(before), time.Now()}}
	r.hpa = a
	return r.clamped(i, before)
}

// forgetDeletedAutoscaler updates the model after step s passed: kubectl
// delete hpa leaves no autoscaler to wait for, whether or not the
// webhook reviews the namespace (generative seed 281159, sequence 003: in
// a namespace the webhook ignores, the model kept the deleted autoscaler
// and waited for its clamp of a later scale to 5).
func (r *runner) forgetDeletedAutoscaler(s step) {
	if len(s.Args) > 1 && s.Args[0] == "delete" && strings.HasPrefix(s.Args[1], "horizontalpodautoscaler/") {
		r.hpa = nil
	}
}

// settleAutoscaler runs before step i: when the autoscaler will change
// the object's replicas, it waits until it has, checks the value against
// the model and records the write as the controller's. A write of the
// controller that does not come is a write that must pass and did not.
func (r *runner) settleAutoscaler(i int) {
	if r.hpa != nil {
		r.clamped(i, r.get(r.f.Namespace))
	}
}

// clamped waits, when before's replicas are out of the autoscaler's
// bounds, until the controller has changed them (it may have done so
// already), checks the value against the model and records the write as
// the controller's; it returns the object after it (before when the
// controller has nothing to do).
func (r *runner) clamped(i int, before map[string]any) map[string]any {
	n := replicasOf(before)
	if before == nil || !r.hpa.outOfBounds(n) {
		return before
	}
	allowed := r.hpa.allowed(n, time.Now())
	deadline := time.Now().Add(45 * time.Second)
	for {
		after := r.get(r.f.Namespace)
		got := replicasOf(after)
		switch {
		case after == nil:
			return before
		case got != n:
			r.noteClamp(i, allowed, before, after)
			return after
		case time.Now().After(deadline):
			r.fail(i, "must-pass", falseDenial, "the autoscaler (min %d, max %d) did not scale %d within 45s (denied, or its write failed)", r.hpa.min, r.hpa.max, n)
			r.hpa = nil
			return before
		}
		time.Sleep(time.Second)
	}
}

// noteClamp checks the autoscaler's write that turned before's replicas
// into after's against allowed, the counts the model allows it, and
// records it as the controller's.
func (r *runner) noteClamp(i int, allowed []int, before, after map[string]any) {
	n, got := replicasOf(before), replicasOf(after)
	r.t.Logf("STEP %d: the autoscaler (min %d, max %d) scaled %d to %d", i+1, r.hpa.min, r.hpa.max, n, got)
	if !slices.Contains(allowed, got) {
		r.fail(i, "autoscaler-bounds", "", "the autoscaler (min %d, max %d) scaled %d to %d, want one of %v", r.hpa.min, r.hpa.max, n, got, allowed)
	}
	r.hpa.recommendations = append(r.hpa.recommendations, recommendation{got, time.Now()})
	r.recordClamp(before, after)
}

// scaledThenClamped splits what the runner read after step i, a kubectl
// scale --replicas=N out of the autoscaler's bounds, when the controller
// clamped the count before the read (its sync came between the write and
// the read): it returns the object as the scale left it, for the step to
// be judged and recorded by, and the object read, the clamp, for
// noteClamp (generative seed 281149, sequence 002, step 18: a robot's
// scale to 4 under min = max = 2 read back as 2, so its true
// [imperative-edit] at spec.replicas was judged a write that moved
// nothing). after and nil for any other step.
func (r *runner) scaledThenClamped(s step, res framework.Result, after map[string]any) (written, clamp map[string]any) {
	n, ok := scaledTo(s)
	if r.hpa == nil || res.ExitCode != 0 || after == nil || !ok || !r.hpa.outOfBounds(n) || replicasOf(after) == n {
		return after, nil
	}
	return withReplicasOf(after, map[string]any{"spec": map[string]any{"replicas": float64(n)}}), after
}

// scaledTo is the count of a kubectl scale --replicas=N step.
func scaledTo(s step) (int, bool) {
	if len(s.Args) == 0 || s.Args[0] != "scale" {
		return 0, false
	}
	for _, arg := range s.Args {
		if v, ok := strings.CutPrefix(arg, "--replicas="); ok {
			n, err := strconv.Atoi(v)
			return n, err == nil
		}
	}
	return 0, false
}

// recordClamp records the autoscaler's write, which turned before's
// replicas into after's, as the controller's. It writes through /scale,
// which changes the replicas alone: whatever else changed while the
// runner waited for it (up to 45 s, past awaitAudit's window) is another
// writer's, the periodic audit's, for betweenSteps to judge. So the
// object of the previous step takes the clamp's replicas and nothing
// else, and betweenSteps keeps the count recorded as the controller's
// (soak seed 271126, sequence 710: the audit's removal of a person's
// annotation during the wait was recorded as the autoscaler's write, and
// betweenSteps then judged it the removal of a robot's field).
func (r *runner) recordClamp(before, after map[string]any) {
	others := slices.DeleteFunc(changed(before, after), func(q fieldPath) bool {
		return q.String() == framework.ReplicasPath.String() || meshStamped(q)
	})
	if len(others) > 0 {
		r.t.Logf("while the runner waited for the autoscaler's clamp, %v changed too: not the autoscaler's write", others)
	}
	r.record(step{As: hpaController}, before, withReplicasOf(before, after))
	if r.last != nil {
		r.last = withReplicasOf(r.last, after)
	}
}

// withReplicasOf is a copy of obj with from's spec.replicas (none where
// from has none).
func withReplicasOf(obj, from map[string]any) map[string]any {
	out := runtime.DeepCopyJSON(obj)
	spec := framework.EnsureMap(out, "spec")
	if v, ok := framework.ReplicasPath.Lookup(from); ok {
		spec["replicas"] = v
	} else {
		delete(spec, "replicas")
	}
	return out
}

// autoscaledTrue reports whether g is a true replicas-autoscaled warning
// of an apply of manifest: the manifest sets replicas (the count the
// warning names) while the
// autoscaler of kubectl autoscale (named after the object) scales the
// object, with the bounds the command gave. Allowed, never required: the
// webhook reads autoscalers from its cache, which may not have the new
// one yet.
func (r *runner) autoscaledTrue(g framework.Reported, manifest map[string]any) bool {
	replicas, sets := framework.ReplicasPath.Lookup(manifest)
	return g.Rule == "replicas-autoscaled" && g.Action != framework.Deny && sets && r.hpa != nil &&
		strings.Contains(g.Line, fmt.Sprintf("the manifest sets spec.replicas to %v, ", replicas)) &&
		strings.Contains(g.Line, "HorizontalPodAutoscaler "+r.o.name+" ") &&
		strings.Contains(g.Line, fmt.Sprintf("between %d and %d", r.hpa.min, r.hpa.max))
}
