package autoscaler_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// autoscaled applies testdata/web.yaml (replicas: 1) with kubectl apply
// and applyArgs, and the autoscaler of testdata/hpa.yaml (minReplicas 3),
// and waits until the autoscaler has scaled the Deployment to 3 and says
// it wants 3.
func autoscaled(t *testing.T, f *framework.Framework, applyArgs ...string) {
	t.Helper()
	k := f.Kubectl
	apply := append(append([]string{"apply"}, applyArgs...), "-f", "testdata/web.yaml")
	framework.WantLines(t, k.Run(t, apply...).MustSucceed(t).Stdout, "deployment.apps/web "+map[bool]string{true: "serverside-applied", false: "created"}[len(applyArgs) > 0])
	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/hpa.yaml").MustSucceed(t).Stdout, "horizontalpodautoscaler.autoscaling/web created")
	framework.Eventually(t, 2*time.Minute, "the autoscaler to scale web to its minReplicas", func(ctx context.Context) (bool, error) {
		hpa, err := f.Client.AutoscalingV2().HorizontalPodAutoscalers(f.Namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		dep, err := f.Client.AppsV1().Deployments(f.Namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return hpa.Status.DesiredReplicas == 3 && dep.Spec.Replicas != nil && *dep.Spec.Replicas == 3, nil
	})
}

// autoscaledMessage is replicas-autoscaled's message about web.yaml while
// the autoscaler wants 3.
func autoscaledMessage(ns string) string {
	return "[replicas-autoscaled] Deployment " + ns + "/web: the manifest sets spec.replicas to 1, but HorizontalPodAutoscaler web scales this Deployment " +
		"(it wants 3 replicas now, between 3 and 10), so every apply fights the autoscaler: it sets the count back to 1 and the autoscaler scales it again. " +
		"Drop replicas from the manifest to leave them to the autoscaler; that apply is replicas-reset's hand-over (its repair action keeps the live count)."
}

// replicas is the Deployment's spec.replicas as kubectl get prints it.
func replicas(t *testing.T, k framework.Kubectl) string {
	t.Helper()
	return k.JSONPath(t, "deployment/web", "{.spec.replicas}")
}

// An HPA scales web from the manifest's 1 to its minReplicas 3; applying
// the manifest again sets 1 back: apply-hygiene warns once, naming the
// autoscaler and its desired count (apply-reverts-drift, which would name
// kube-controller-manager's change, leaves the count to it), as kubectl
// hygiene diff predicted.
// With deny configured the apply is denied and replicas stay 3.
func TestApplySettingReplicasOfAnAutoscaledDeployment(t *testing.T) {
	p := framework.NewPredictor(t)
	t.Run("warns by default", func(t *testing.T) {
		f := framework.New(t)
		autoscaled(t, f)
		res := p.Apply(t, f.Kubectl, "testdata/web.yaml").MustSucceed(t)
		framework.WantLines(t, res.Stdout, "deployment.apps/web configured")
		// One warning: apply-reverts-drift leaves the count to it.
		framework.WantLines(t, res.Stderr, "Warning: "+autoscaledMessage(f.Namespace))
	})

	// A GitOps controller applies server-side with force: the applied
	// configuration has replicas, so it fights the autoscaler as well.
	// (Without --force-conflicts the API server refuses the apply before
	// admission: kube-controller-manager owns the count it scaled.)
	t.Run("server-side apply with force", func(t *testing.T) {
		f := framework.New(t)
		autoscaled(t, f, "--server-side", "--field-manager=kustomize-controller")
		res := f.Kubectl.Run(t, "apply", "--server-side", "--force-conflicts", "--field-manager=kustomize-controller", "-f", "testdata/web.yaml").MustSucceed(t)
		framework.WantLines(t, res.Stdout, "deployment.apps/web serverside-applied")
		framework.WantLines(t, res.Stderr, "Warning: "+autoscaledMessage(f.Namespace))

		// The configuration without replicas leaves them to the autoscaler:
		// nothing is said.
		res = f.Kubectl.Run(t, "apply", "--server-side", "--field-manager=kustomize-controller", "-f", "testdata/web-no-replicas.yaml").MustSucceed(t)
		framework.WantLines(t, res.Stdout, "deployment.apps/web serverside-applied")
		framework.WantLines(t, res.Stderr)
	})

	t.Run("denies when configured", func(t *testing.T) {
		framework.Reconfigure(t, "policy.rules.replicas-autoscaled.action=deny")
		f := framework.New(t)
		autoscaled(t, f)
		const file = "testdata/web.yaml"
		res := p.Apply(t, f.Kubectl, file).MustFail(t)
		lines := res.StderrLines()
		framework.WantLines(t, lines[len(lines)-1], fmt.Sprintf("for: %q: error when patching %q: ", file, file)+framework.DeniedPrefix+autoscaledMessage(f.Namespace))
		framework.WantLines(t, replicas(t, f.Kubectl), "3")
	})
}

// With replicas-reset's repair action, the apply that drops replicas from
// the manifest of an autoscaled Deployment keeps the live count (3, the
// autoscaler's) and says so; last-applied no longer has replicas, so the
// next apply of the same manifest changes nothing and says nothing.
func TestApplyDroppingReplicasIsRepaired(t *testing.T) {
	framework.Reconfigure(t, "policy.rules.replicas-reset.action=repair")
	p := framework.NewPredictor(t)
	f := framework.New(t)
	k := f.Kubectl
	autoscaled(t, f)

	res := p.Apply(t, k, "testdata/web-no-replicas.yaml").MustSucceed(t)
	framework.WantLines(t, res.Stdout, "deployment.apps/web configured")
	framework.WantLines(t, res.Stderr, "Warning: [replicas-reset] Deployment "+f.Namespace+"/web: the manifest drops spec.replicas, which last-applied has; "+
		"apply-hygiene keeps its live value 3 in this request, and last-applied no longer has it, so from now on kubectl apply leaves it to kubectl scale or an autoscaler.")
	framework.WantLines(t, k.Run(t, "get", "deployment/web", "-o", "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas").MustSucceed(t).Stdout,
		"NAME   REPLICAS", "web    3")
	if la := k.JSONPath(t, "deployment/web", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`); strings.Contains(la, `"replicas"`) {
		t.Errorf("last-applied still has replicas: %s", la)
	}

	again := p.Apply(t, k, "testdata/web-no-replicas.yaml").MustSucceed(t)
	framework.WantLines(t, again.Stdout, "deployment.apps/web unchanged")
	framework.WantLines(t, again.Stderr)
	framework.WantLines(t, replicas(t, k), "3")
}

// Without an autoscaler of the Deployment (one of another Deployment in
// the namespace does not count), nothing new is said: changing replicas
// in the manifest is silent, and dropping them is denied by replicas-reset
// as before.
func TestWithoutAutoscalerNothingNewIsSaid(t *testing.T) {
	p := framework.NewPredictor(t)
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/hpa-api.yaml").MustSucceed(t)
	k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)

	res := p.Apply(t, k, "testdata/web-4.yaml").MustSucceed(t)
	framework.WantLines(t, res.Stdout, "deployment.apps/web configured")
	framework.WantLines(t, res.Stderr)

	const file = "testdata/web-no-replicas.yaml"
	denied := p.Apply(t, k, file).MustFail(t)
	lines := denied.StderrLines()
	framework.WantLines(t, lines[len(lines)-1], fmt.Sprintf("for: %q: error when patching %q: ", file, file)+framework.DeniedPrefix+
		"[replicas-reset] Deployment "+f.Namespace+"/web: the manifest drops spec.replicas, which last-applied has, so this apply resets it from 4 to 1. "+
		"To hand replicas over to kubectl scale or an autoscaler, first delete it from last-applied with: kubectl hygiene handover deployments.apps/web -n "+f.Namespace+" spec.replicas"+
		", then apply the manifest without it.")
	framework.WantLines(t, replicas(t, k), "4")
}

// handoverWith finds the hand-over command in replicas-reset's denial.
var handoverWith = regexp.MustCompile(`first delete it from last-applied with: (kubectl hygiene handover .*), then apply the manifest without it\.$`)

// Seed 001's hand-over of replicas to an autoscaler, done with kubectl
// hygiene handover: the apply of the manifest without replicas is denied
// (it would reset the autoscaler's 3 to 1) with a message naming the
// hand-over command; that command, run as printed, hands replicas over;
// the autoscaler then scales on (to a new minReplicas of 5), and the apply
// of the manifest without replicas, as kubectl hygiene diff predicts,
// changes nothing and leaves the autoscaler's count alone.
func TestHandoverOfReplicasToTheAutoscaler(t *testing.T) {
	p := framework.NewPredictor(t)
	f := framework.New(t)
	k := f.Kubectl
	autoscaled(t, f)

	const file = "testdata/web-no-replicas.yaml"
	denied := p.Apply(t, k, file).MustFail(t)
	lines := denied.StderrLines()
	framework.WantLines(t, lines[len(lines)-1], fmt.Sprintf("for: %q: error when patching %q: ", file, file)+framework.DeniedPrefix+
		"[replicas-reset] Deployment "+f.Namespace+"/web: the manifest drops spec.replicas, which last-applied has, so this apply resets it from 3 to 1. "+
		"To hand replicas over to kubectl scale or an autoscaler, first delete it from last-applied with: kubectl hygiene handover deployments.apps/web -n "+f.Namespace+" spec.replicas"+
		", then apply the manifest without it.")
	framework.WantLines(t, replicas(t, k), "3")

	out := k.RunPrinted(t, handoverWith.FindStringSubmatch(lines[len(lines)-1])[1])
	framework.WantLines(t, strings.TrimSpace(out),
		"Deployment "+f.Namespace+"/web: last-applied no longer has spec.replicas",
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.",
		"Drop them from your manifest too: an apply of a manifest that sets them takes them back.")

	hpa, err := os.ReadFile("testdata/hpa.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hpa5 := framework.WriteFile(t, "hpa.yaml", strings.Replace(string(hpa), "minReplicas: 3", "minReplicas: 5", 1), 0o644)
	framework.WantLines(t, k.Run(t, "apply", "-f", hpa5).MustSucceed(t).Stdout, "horizontalpodautoscaler.autoscaling/web configured")
	framework.Eventually(t, 2*time.Minute, "the autoscaler to scale web to its new minReplicas", func(ctx context.Context) (bool, error) {
		dep, err := f.Client.AppsV1().Deployments(f.Namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return dep.Spec.Replicas != nil && *dep.Spec.Replicas == 5, nil
	})

	apply := p.Apply(t, k, file).MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web unchanged")
	framework.WantLines(t, apply.Stderr)
	framework.WantLines(t, replicas(t, k), "5")
}
