package policy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// A GitOps controller applies server-side (here kubectl with Flux's
// kustomize-controller field manager, as Flux's own client-go apply
// records it); a kubectl set image of the image it applied is reverted at
// its next reconcile. apply-hygiene warns by default, naming the manager,
// and denies when configured to; the controller's own applies are not
// findings.
func TestEditOfAFieldAGitOpsControllerApplies(t *testing.T) {
	const dep = "deployment/nginx-deployment"
	warning := func(f *framework.Framework) string {
		return "[server-side-owned] Deployment " + f.Namespace + "/nginx-deployment: this write by apply-hygiene-admin (field manager kubectl-set) changes fields that kustomize-controller applies server-side: " +
			`spec.template.spec.containers[name=nginx].image (applied "nginx:1.14.2", now "nginx:1.99"); its next apply puts the applied values back. ` +
			"It is managed by Flux (kustomize-controller); make the change in the Git source of its Kustomization"
	}

	t.Run("warn by default", func(t *testing.T) {
		f := framework.New(t)
		k := f.Kubectl
		apply := k.Run(t, "apply", "--server-side", "--field-manager=kustomize-controller", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)
		framework.WantLines(t, apply.Stderr)

		set := k.Run(t, "set", "image", dep, "nginx=nginx:1.99").MustSucceed(t)
		framework.WantLines(t, set.Stdout, "deployment.apps/nginx-deployment image updated")
		framework.WantLines(t, set.Stderr, "Warning: "+warning(f))

		// The controller's next reconcile puts its image back, with no
		// finding: an apply is not an edit.
		again := k.Run(t, "apply", "--server-side", "--force-conflicts", "--field-manager=kustomize-controller", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)
		framework.WantLines(t, again.Stderr)
		framework.WantLines(t, k.JSONPath(t, dep, "{.spec.template.spec.containers[0].image}"), "nginx:1.14.2")
	})

	t.Run("deny when configured", func(t *testing.T) {
		framework.Reconfigure(t, "policy.rules.server-side-owned.action=deny")
		f := framework.New(t)
		k := f.Kubectl
		k.Run(t, "apply", "--server-side", "--field-manager=kustomize-controller", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)

		set := k.Run(t, "set", "image", dep, "nginx=nginx:1.99")
		framework.WantLines(t, set.Stderr,
			`error: failed to patch image update to pod template: admission webhook "validate.apply-hygiene.io" denied the request: `+warning(f))
		framework.WantLines(t, k.JSONPath(t, dep, "{.spec.template.spec.containers[0].image}"), "nginx:1.14.2")
	})

	t.Run("kubectl apply --server-side then kubectl scale", func(t *testing.T) {
		f := framework.New(t)
		k := f.Kubectl
		manifest := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.14.2
`
		k.RunWithInput(t, manifest, "apply", "--server-side", "-f", "-").MustSucceed(t)
		scale := k.Run(t, "scale", "deployment/web", "--replicas=5").MustSucceed(t)
		framework.WantLines(t, scale.Stderr,
			"Warning: [server-side-owned] Deployment "+f.Namespace+"/web: this write by apply-hygiene-admin changes fields that kubectl apply --server-side applied: "+
				"spec.replicas (applied 2, now 5); the next kubectl apply --server-side of the manifest fails on the conflict, or puts the applied values back with --force-conflicts. "+
				"Put the change in your manifest and apply it with: kubectl apply --server-side -f <manifest>")
	})
}

// The first kubectl apply --server-side of an object applied client-side:
// kubectl applies, records last-applied under kubectl-last-applied, moves
// client-side apply's fields to its own manager and applies again, which
// deletes what the manifest dropped. No request of the four is warned
// about: the fields dropped are gone at the end, not orphaned.
func TestFirstServerSideApplyAfterClientSideApplyIsSilent(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	// v2 drops the label team and the env var DEBUG.
	k.Run(t, "apply", "-f", "testdata/client-side-then-server-side-v1.yaml").MustSucceed(t)
	apply := k.Run(t, "apply", "--server-side", "-f", "testdata/client-side-then-server-side-v2.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web serverside-applied")
	framework.WantLines(t, apply.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.metadata.labels}"), `{"app":"web"}`)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].env}"), `[{"name":"LOG_LEVEL","value":"info"}]`)
}

// A kubectl rollout restart of a Deployment Argo CD applies server-side:
// self-heal would sync the restartedAt annotation away, so the warning
// names Argo CD's own restart action and the ignoreDifferences way out.
// The restart goes through.
func TestRolloutRestartOfAnArgoCDObjectNamesTheWorkaround(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "--server-side", "--field-manager=argocd-controller", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)
	restart := k.Run(t, "rollout", "restart", "deployment/nginx-deployment").MustSucceed(t)
	framework.WantLines(t, restart.Stdout, "deployment.apps/nginx-deployment restarted")
	framework.WantLines(t, restart.Stderr,
		"Warning: [server-side-owned] Deployment "+f.Namespace+"/nginx-deployment: kubectl rollout restart adds spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt], "+
			"which Git does not have, to an object that Argo CD applies (field manager argocd-controller); with self-heal Argo CD syncs it away and the restart is undone. "+
			"Restart through Argo CD with: argocd app actions run <application> restart --kind Deployment --resource-name nginx-deployment, "+
			"or add /spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt to the Application's ignoreDifferences")

	// The same restart of an object Flux applies holds: nothing to say.
	g := framework.New(t)
	g.Kubectl.Run(t, "apply", "--server-side", "--field-manager=kustomize-controller", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)
	flux := g.Kubectl.Run(t, "rollout", "restart", "deployment/nginx-deployment").MustSucceed(t)
	framework.WantLines(t, flux.Stderr)
}

// A server-side apply by another manager with --force-conflicts changes
// the image that last-applied owns (issue 25): the apply is warned about,
// never denied, and the next client-side apply of the manifest, which puts
// the old image back, warns naming that manager. Every Apply entry counted
// as an applier, so both were silent.
func TestServerSideApplyByAnotherManagerOfAFieldLastAppliedOwns(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/web-v1.yaml").MustSucceed(t)
	v1, err := os.ReadFile("testdata/web-v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bumped := strings.Replace(string(v1), "image: nginx:1.14.2", "image: nginx:1.16.1", 1)

	ssa := k.RunWithInput(t, bumped, "apply", "--server-side", "--field-manager=deploy-bot", "--force-conflicts", "-f", "-").MustSucceed(t)
	framework.WantLines(t, ssa.Stdout, "deployment.apps/web serverside-applied")
	framework.WantLines(t, ssa.Stderr,
		"Warning: [imperative-edit] Deployment "+f.Namespace+"/web: this server-side apply by apply-hygiene-admin (field manager deploy-bot) changes fields that last-applied owns: "+
			`spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.16.1"); the next client-side kubectl apply puts the last-applied values back. `+
			"Put the change in the manifest you apply with kubectl apply, or apply it with kubectl apply --server-side from now on")

	// kubectl's migration to server-side apply moved last-applied to
	// deploy-bot, whose re-apply deleted it: the apply says so too.
	apply := k.Run(t, "apply", "-f", "testdata/web-v1.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	framework.WantMatch(t, apply.Stderr,
		quote("Warning: resource deployments/web is missing the kubectl.kubernetes.io/last-applied-configuration annotation which is required by kubectl apply. "+
			"kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically."),
		quote("Warning: [apply-reverts-drift] Deployment "+f.Namespace+"/web: this apply sets "+
			`spec.template.spec.containers[name=nginx].image back to "nginx:1.14.2", discarding "nginx:1.16.1" set by deploy-bot at `)+
			timestamp+
			quote(" since the last apply. To keep that value, put it in your manifest before you apply; see every drifted field with: "+
				"kubectl hygiene explain deployments.apps/web -n "+f.Namespace),
		quote("Warning: [missing-last-applied] Deployment "+f.Namespace+"/web: the object has no kubectl.kubernetes.io/last-applied-configuration annotation "+
			"(objects made by kubectl create or replace without --save-config have none), so this apply cannot delete fields that your manifest does not have; "+
			"from now on apply records it. See the live fields your manifest does not have with: kubectl hygiene explain deployments.apps/web -n "+f.Namespace))
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.14.2")
}

// A tool that applied client-side and now applies its own manifest
// server-side (Argo CD switched to ServerSideApply=true, under its field
// manager argocd-controller) owns last-applied itself: its server-side
// apply of another image is no finding, nor is Flux's kustomize-controller
// applying an object it applied before.
func TestServerSideApplyOfAToolsOwnObjectIsSilent(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "--field-manager=argocd-controller", "-f", "testdata/web-v1.yaml").MustSucceed(t)
	v1, err := os.ReadFile("testdata/web-v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bumped := strings.Replace(string(v1), "image: nginx:1.14.2", "image: nginx:1.16.1", 1)
	ssa := k.RunWithInput(t, bumped, "apply", "--server-side", "--field-manager=argocd-controller", "--force-conflicts", "-f", "-").MustSucceed(t)
	framework.WantLines(t, ssa.Stdout, "deployment.apps/web serverside-applied")
	framework.WantLines(t, ssa.Stderr)

	g := framework.New(t)
	g.Kubectl.Run(t, "apply", "--server-side", "--field-manager=kustomize-controller", "-f", "testdata/web-v1.yaml").MustSucceed(t)
	flux := g.Kubectl.RunWithInput(t, bumped, "apply", "--server-side", "--field-manager=kustomize-controller", "-f", "-").MustSucceed(t)
	framework.WantLines(t, flux.Stderr)
}
