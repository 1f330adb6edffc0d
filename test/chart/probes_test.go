package chart_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestProbes checks the server container's probes: a startup probe on
// /readyz whose first look comes well after the server's start (0.2-0.3 s
// from its process start on the local control plane), so a normal start leaves no "Readiness probe failed: …
// connection refused" Warning event; liveness and readiness, which the
// kubelet runs only after it passed, have no delay of their own.
func TestProbes(t *testing.T) {
	probe := func(path string, delay, period, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("healthz")}},
			InitialDelaySeconds: delay, PeriodSeconds: period, FailureThreshold: failures,
		}
	}
	want := map[string]*corev1.Probe{
		"startup":   probe("/readyz", 2, 1, 60),
		"liveness":  probe("/healthz", 0, 10, 3),
		"readiness": probe("/readyz", 0, 5, 3),
	}
	for _, scenario := range []string{"default", "full"} {
		t.Run(scenario, func(t *testing.T) {
			c := only[appsv1.Deployment](t, decode(t, render(t, scenario)), "Deployment").Spec.Template.Spec.Containers[0]
			got := map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("probes (-want +got):\n%s", diff)
			}
		})
	}
}
