package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 002: a StatefulSet switched to OnDelete by apply. Without
// apply-hygiene the API server rejects it (the defaulted rollingUpdate
// stays behind); the mutating webhook removes it and says so.
func TestStatefulSetSwitchedToOnDeleteIsRepaired(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	framework.WantLines(t, k.Run(t, "apply", "-f", seeds+"seed002-statefulset.yaml").MustSucceed(t).Stdout, "statefulset.apps/web created")

	apply := k.Run(t, "apply", "-f", seeds+"seed002-statefulset-ondelete.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "statefulset.apps/web configured")
	framework.WantMatch(t, apply.Stderr,
		quote("Warning: [defaulted-dependent] StatefulSet "+f.Namespace+"/web: the manifest changes spec.updateStrategy.type, "+
			"but the server-defaulted spec.updateStrategy.rollingUpdate (")+`\{[^}]*"partition":0[^}]*\}`+
			quote(") stays behind and the API server rejects the object while it stays. apply-hygiene removes it in this request."))
	framework.WantLines(t, k.JSONPath(t, "statefulset/web", "{.spec.updateStrategy}"), `{"type":"OnDelete"}`)
}

// replicasReset is the denial of an apply that drops replicas=5.
func replicasReset(ns string) string {
	return fmt.Sprintf("[replicas-reset] Deployment %s/web: the manifest drops spec.replicas, which last-applied has, so this apply resets it from 5 to 1. "+
		"To hand replicas over to kubectl scale or an autoscaler, first delete it from last-applied with: kubectl hygiene handover deployments.apps/web -n %s spec.replicas, "+
		"then apply the manifest without it.", ns, ns)
}

// A break-glass kubectl scale to 5, then an apply of the manifest without
// replicas: denied with the hand-over steps, and replicas stay 5.
func TestApplyDroppingScaledReplicasIsDenied(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/web-v1.yaml").MustSucceed(t)
	oncall := breakGlass(t, f, "oncall-bob")
	framework.WantLines(t, oncall.Run(t, "scale", "deployment/web", "--replicas=5").MustSucceed(t).Stdout, "deployment.apps/web scaled")

	const file = "testdata/web-no-replicas.yaml"
	apply := k.Run(t, "apply", "-f", file).MustFail(t)
	lines := apply.StderrLines()
	framework.WantLines(t, lines[len(lines)-1], fmt.Sprintf("for: %q: error when patching %q: ", file, file)+framework.DeniedPrefix+replicasReset(f.Namespace))
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.replicas}"), "5")
}

// A GitOps controller (a service account) syncs a manifest that dropped
// replicas for an autoscaler after someone scaled to 5: the sync goes
// through with a warning instead of failing every retry, and the server
// resets replicas to 1 as the warning says. That apply has dropped replicas
// from last-applied too, so the warning suggests what can still be done
// (found by review: it suggested the hand-over, which then failed with
// "last-applied has no spec.replicas"): its command, run as printed, sets
// the count back, and the next sync leaves it alone.
func TestServiceAccountApplyDroppingScaledReplicasIsWarned(t *testing.T) {
	f := framework.New(t)
	gitops := f.KubectlAsServiceAccount(t, "gitops")
	gitops.Run(t, "apply", "-f", "testdata/web-v1.yaml").MustSucceed(t)
	oncall := breakGlass(t, f, "oncall-bob")
	oncall.Run(t, "scale", "deployment/web", "--replicas=5").MustSucceed(t)

	apply := gitops.Run(t, "apply", "-f", "testdata/web-no-replicas.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	framework.WantLines(t, f.Kubectl.JSONPath(t, "deployment/web", "{.spec.replicas}"), "1")
	// Only the replicas-reset line is asserted: whether apply-reverts-drift
	// also reports the removed replicas is that rule's business.
	var warning string
	for _, line := range apply.StderrLines() {
		if strings.HasPrefix(line, "Warning: [replicas-reset] ") {
			warning = line
		}
	}
	_, command, found := strings.Cut(warning, "with: ")
	if !found {
		t.Fatalf("no replicas-reset warning with a command in:\n%s", apply.Stderr)
	}
	out := f.Kubectl.RunPrinted(t, strings.TrimSuffix(command, ", then apply the manifest without it."))
	framework.WantLines(t, strings.TrimSpace(out), "deployment.apps/web scaled")
	framework.WantLines(t, warning, "Warning: [replicas-reset] Deployment "+f.Namespace+"/web: the manifest drops spec.replicas, which last-applied has, "+
		"so this apply resets it from 5 to 1, and last-applied no longer has it: from now on kubectl apply leaves it to kubectl scale or an autoscaler. "+
		"To keep 5, set it back with: kubectl scale deployments.apps/web -n "+f.Namespace+" --replicas=5")
	framework.WantLines(t, f.Kubectl.JSONPath(t, "deployment/web", "{.spec.replicas}"), "5")

	again := gitops.Run(t, "apply", "-f", "testdata/web-no-replicas.yaml").MustSucceed(t)
	framework.WantLines(t, again.Stdout, "deployment.apps/web unchanged")
	framework.WantLines(t, again.Stderr)
	framework.WantLines(t, f.Kubectl.JSONPath(t, "deployment/web", "{.spec.replicas}"), "5")
}

// A break-glass kubectl set env on a variable the manifest owns, then an
// apply: it puts the old value back and warns, naming kubectl-set.
func TestApplyOverKubectlSetEnvWarnsOfRevert(t *testing.T) {
	tests := map[string]struct {
		manifest string
		stdout   string
	}{
		"with a changed manifest": {manifest: "testdata/web-v2.yaml"},
		// Last-applied stays the same: the webhook recomputes the apply all
		// the same (merge.AnalyzeClientSideApply).
		"with the unchanged manifest": {manifest: "testdata/web-v1.yaml"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			k.Run(t, "apply", "-f", "testdata/web-v1.yaml").MustSucceed(t)
			oncall := breakGlass(t, f, "oncall-bob")
			oncall.Run(t, "set", "env", "deployment/web", "-c", "nginx", "LOG_LEVEL=debug").MustSucceed(t)

			apply := k.Run(t, "apply", "-f", tc.manifest).MustSucceed(t)
			framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
			framework.WantMatch(t, apply.Stderr,
				quote("Warning: [apply-reverts-drift] Deployment "+f.Namespace+"/web: this apply sets "+
					`spec.template.spec.containers[name=nginx].env[name=LOG_LEVEL].value back to "info", discarding "debug" set by kubectl-set at `)+
					timestamp+
					quote(" since the last apply. To keep that value, put it in your manifest before you apply; see every drifted field with: "+
						"kubectl hygiene explain deployments.apps/web -n "+f.Namespace))
			framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].env[0].value}"), "info")
		})
	}
}

// In a namespace labelled apply-hygiene.io/enforcement=warn, the
// imperative-edit denial is a warning and the write goes through.
func TestEnforcementLabelTurnsDenialIntoWarning(t *testing.T) {
	f := framework.New(t)
	labelNamespace(t, f, "apply-hygiene.io/enforcement=warn")
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/web-v1.yaml").MustSucceed(t)

	res := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustSucceed(t)
	framework.WantLines(t, res.Stdout, "deployment.apps/web image updated")
	framework.WantLines(t, res.Stderr, "Warning: [imperative-edit] Deployment "+f.Namespace+"/web: this write by apply-hygiene-admin (field manager kubectl-set) "+
		`changes fields that last-applied owns: spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.99"); `+
		"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, "+
		"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover deployments.apps/web -n "+f.Namespace+" 'spec.template.spec.containers[name=nginx].image'")
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.99")
}
