package policy_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// cronJob is a CronJob manifest with the given schedule.
func cronJob(schedule string) string {
	return `apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
spec:
  schedule: "` + schedule + `"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: app
            image: busybox:1.36
            command: ["true"]
`
}

// A CronJob suspended by kubectl patch (the usual action in an incident)
// and a StatefulSet whose staged rollout kubectl patch holds back with a
// partition: the apply of a changed manifest says nothing about either
// field (no [orphaned-field], whose command would resume the schedule or
// roll the rest of the pods), and both stay.
func TestApplyKeepsSuspendAndPartitionSilently(t *testing.T) {
	framework.Reconfigure(t, "failurePolicy=Fail", "kinds=common")
	t.Run("a suspended CronJob", func(t *testing.T) {
		k := framework.New(t).Kubectl
		applyManifest(t, k, cronJob("0 3 * * *")).MustSucceed(t)
		patch := k.Run(t, "patch", "cronjob/report", "-p", `{"spec":{"suspend":true}}`).MustSucceed(t)
		framework.WantLines(t, patch.Stdout, "cronjob.batch/report patched")
		framework.WantLines(t, patch.Stderr)

		apply := applyManifest(t, k, cronJob("0 4 * * *")).MustSucceed(t)
		framework.WantLines(t, apply.Stdout, "cronjob.batch/report configured")
		framework.WantLines(t, apply.Stderr)
		framework.WantLines(t, k.JSONPath(t, "cronjob/report", "{.spec.suspend} {.spec.schedule}"), "true 0 4 * * *")
	})
	t.Run("a StatefulSet held back by a partition", func(t *testing.T) {
		k := framework.New(t).Kubectl
		manifest := workload("StatefulSet", "web", []string{"updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}"}, nil)
		applyManifest(t, k, manifest).MustSucceed(t)
		patch := k.Run(t, "patch", "statefulset/web", "-p", `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}}}}`).MustSucceed(t)
		framework.WantLines(t, patch.Stdout, "statefulset.apps/web patched")
		framework.WantLines(t, patch.Stderr)

		apply := applyManifest(t, k, v2(manifest)).MustSucceed(t)
		framework.WantLines(t, apply.Stdout, "statefulset.apps/web configured")
		framework.WantLines(t, apply.Stderr)
		framework.WantLines(t, k.JSONPath(t, "statefulset/web", "{.spec.updateStrategy.rollingUpdate.partition} {.spec.template.spec.containers[0].image}"), "1 nginx:1.28")
	})
}
