package policy

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The bundled rules are silent for a clean client-side apply, and the
// shapes that silence is computed on have no autoscaling part: an input
// with autoscalers is evaluated all the same, so replicas-autoscaled
// decides on an apply that nothing else is said about.
func TestAutoscalingIsNeverSkipped(t *testing.T) {
	e := newEngine(t)
	if !slices.Contains(e.Status().Silent, ClientSideApply) {
		t.Fatalf("the bundled rules are not silent for client-side-apply (%v): the test proves nothing", e.Status().Silent)
	}
	in := loadInput(t, "clean-apply")
	if ds, err := e.Evaluate(t.Context(), in); err != nil || len(ds) != 0 {
		t.Fatalf("clean apply: decisions %+v, error %v; want none", ds, err)
	}
	in.Autoscaling = &Autoscaling{ManifestReplicas: int64(3),
		Autoscalers: []Autoscaler{{Name: "web", MinReplicas: 2, MaxReplicas: 10, CurrentReplicas: 5, DesiredReplicas: 5}}}
	ds, err := e.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Decision{{Rule: RuleReplicasAutoscaled, Action: ActionWarn, Paths: []string{"spec.replicas"},
		Message: "[replicas-autoscaled] Deployment default/nginx: the manifest sets spec.replicas to 3, but HorizontalPodAutoscaler web scales this Deployment " +
			"(it wants 5 replicas now, between 2 and 10), so every apply fights the autoscaler: it sets the count back to 3 and the autoscaler scales it again. " +
			"Drop replicas from the manifest to leave them to the autoscaler; that apply is replicas-reset's hand-over (its repair action keeps the live count)."}}
	if diff := cmp.Diff(want, ds); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}
