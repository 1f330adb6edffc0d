package policy_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// v2 is the workload manifest with a changed image.
func v2(manifest string) string { return strings.Replace(manifest, "nginx:1.27", "nginx:1.28", 1) }

// pauseApplyResume plays the documented way to batch changes: kubectl
// rollout pause, apply a changed manifest (without paused), resume, apply
// again. Every command prints exactly what kubectl prints without
// apply-hygiene, and the pause lasts until the resume.
func pauseApplyResume(t *testing.T, k framework.Kubectl) {
	t.Helper()
	manifest := workload("Deployment", "web", nil, nil)
	applyManifest(t, k, manifest).MustSucceed(t)
	pause := k.Run(t, "rollout", "pause", "deployment/web").MustSucceed(t)
	framework.WantLines(t, pause.Stdout, "deployment.apps/web paused")
	framework.WantLines(t, pause.Stderr)

	apply := applyManifest(t, k, v2(manifest)).MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	framework.WantLines(t, apply.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.paused} {.spec.template.spec.containers[0].image}"), "true nginx:1.28")

	resume := k.Run(t, "rollout", "resume", "deployment/web").MustSucceed(t)
	framework.WantLines(t, resume.Stdout, "deployment.apps/web resumed")
	framework.WantLines(t, resume.Stderr)
	again := applyManifest(t, k, v2(manifest)).MustSucceed(t)
	framework.WantLines(t, again.Stdout, "deployment.apps/web unchanged")
	framework.WantLines(t, again.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.paused}"))
}

// spec.paused set by kubectl rollout pause is a pause, not an orphan: an
// apply during the pause says nothing about it. A manifest that has
// paused: true owns it, and the apply that drops it unpauses the
// Deployment without a word.
func TestApplyDuringRolloutPause(t *testing.T) {
	framework.WithFailurePolicy(t, "Fail")
	t.Run("pause, apply, resume, apply", func(t *testing.T) {
		pauseApplyResume(t, framework.New(t).Kubectl)
	})
	t.Run("a manifest that drops its own paused: true", func(t *testing.T) {
		k := framework.New(t).Kubectl
		applyManifest(t, k, workload("Deployment", "web", []string{"paused: true"}, nil)).MustSucceed(t)
		apply := applyManifest(t, k, v2(workload("Deployment", "web", nil, nil))).MustSucceed(t)
		framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
		framework.WantLines(t, apply.Stderr)
		framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.paused}"))
	})
}

// With orphaned-field set to prune, an apply during a pause does not
// resume the rollout: spec.paused is never pruned.
func TestPruneKeepsRolloutPause(t *testing.T) {
	framework.Reconfigure(t, "failurePolicy=Fail", "policy.rules.orphaned-field.action=prune")
	pauseApplyResume(t, framework.New(t).Kubectl)
}
