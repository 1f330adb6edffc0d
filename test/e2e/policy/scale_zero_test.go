package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// scaleDenial is the [imperative-edit] message for spec.replicas of
// kind/web, whose last-applied has replicas 2, scaled to 0 by user.
func scaleDenial(kind, ns, user string) string {
	return fmt.Sprintf("[imperative-edit] %s %s/web: this write by %s changes fields that last-applied owns: spec.replicas (last-applied 2, now 0); "+
		"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, "+
		"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover %ss.apps/web -n %s spec.replicas",
		kind, ns, user, strings.ToLower(kind), ns)
}

// kubectl scale --replicas=0 (as the HPA, KEDA or any /scale writer)
// sends a Scale whose spec is {}: replicas is omitempty. Under failurePolicy
// Fail it is reviewed as a scale to 0 like any other count: silent when
// the manifest leaves replicas out, the imperative-edit denial for a person
// when last-applied owns replicas, a warning for a service account.
func TestScaleToZero(t *testing.T) {
	framework.WithFailurePolicy(t, "Fail")
	for _, kind := range []string{"Deployment", "StatefulSet"} {
		resource := strings.ToLower(kind) + "/web"
		t.Run(kind+" whose manifest leaves replicas out scales to 0 silently", func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			applyManifest(t, k, workload(kind, "web", nil, nil)).MustSucceed(t)
			res := k.Run(t, "scale", resource, "--replicas=0").MustSucceed(t)
			framework.WantLines(t, res.Stdout, strings.ToLower(kind)+".apps/web scaled")
			framework.WantLines(t, res.Stderr)
			framework.WantLines(t, k.JSONPath(t, resource, "{.spec.replicas}"), "0")
		})
		t.Run(kind+" whose manifest owns replicas: a person's scale to 0 is the imperative-edit denial", func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			applyManifest(t, k, workload(kind, "web", []string{"replicas: 2"}, nil)).MustSucceed(t)
			res := k.Run(t, "scale", resource, "--replicas=0").MustFail(t)
			framework.WantLines(t, res.Stderr, "Error from server (Forbidden): "+framework.DeniedPrefix+scaleDenial(kind, f.Namespace, "apply-hygiene-admin"))
			framework.WantLines(t, k.JSONPath(t, resource, "{.spec.replicas}"), "2")
		})
		t.Run(kind+" whose manifest owns replicas: a service account's scale to 0 passes with a warning", func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			applyManifest(t, k, workload(kind, "web", []string{"replicas: 2"}, nil)).MustSucceed(t)
			robot := f.KubectlAsServiceAccount(t, "scaler")
			res := robot.Run(t, "scale", resource, "--replicas=0").MustSucceed(t)
			framework.WantLines(t, res.Stdout, strings.ToLower(kind)+".apps/web scaled")
			framework.WantLines(t, res.Stderr, "Warning: "+scaleDenial(kind, f.Namespace, "system:serviceaccount:"+f.Namespace+":scaler"))
			framework.WantLines(t, k.JSONPath(t, resource, "{.spec.replicas}"), "0")
		})
	}
}
