package seeds_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 002, "How to update objects": kubectl scale sets replicas, which
// last-applied does not have; the next apply keeps it, clears
// minReadySeconds (removed from the manifest) and sets the new image.
func TestSeed002ScaleThenApplyKeepsReplicasAndClearsMinReadySeconds(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const deploy = "deployment.apps/nginx-deployment"

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed002-simple-deployment.yaml").MustSucceed(t).Stdout, deploy+" created")
	framework.WantLines(t, k.Run(t, "scale", deploy, "--replicas=2").MustSucceed(t).Stdout, deploy+" scaled")
	framework.WantLines(t, k.Run(t, "get", deploy, "-o", "jsonpath={.spec.replicas} {.spec.minReadySeconds}").MustSucceed(t).Stdout, "2 5")

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed002-update-deployment.yaml").MustSucceed(t).Stdout, deploy+" configured")
	got := k.Run(t, "get", deploy, "-o", "jsonpath={.spec.replicas}|{.spec.minReadySeconds}|{.spec.template.spec.containers[0].image}").MustSucceed(t)
	framework.WantLines(t, got.Stdout, "2||nginx:1.11.9")
	// last-applied is the manifest, with the namespace kubectl filled in;
	// replicas, written by scale, is not in it.
	want := manifest(t, "testdata/seed002-update-deployment.yaml")
	want["metadata"].(map[string]any)["namespace"] = f.Namespace
	want["metadata"].(map[string]any)["annotations"] = map[string]any{}
	if diff := cmp.Diff(want, lastApplied(t, k, deploy)); diff != "" {
		t.Errorf("last-applied mismatch (-want +got):\n%s", diff)
	}
}

// Seed 002, "Default field values": the server defaults
// updateStrategy.rollingUpdate; switching the StatefulSet to OnDelete by
// apply leaves the defaulted sibling behind and validation rejects it.
func TestSeed002StatefulSetOnDeleteRejectedForDefaultedRollingUpdate(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const sts = "statefulset.apps/web"

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed002-statefulset.yaml").MustSucceed(t).Stdout, sts+" created")
	framework.WantLines(t, k.Run(t, "get", sts, "-o", "jsonpath={.spec.updateStrategy}").MustSucceed(t).Stdout,
		`{"rollingUpdate":{"maxUnavailable":1,"partition":0},"type":"RollingUpdate"}`)

	res := k.Run(t, "apply", "-f", "testdata/seed002-statefulset-ondelete.yaml").MustFail(t)
	framework.WantLines(t, res.Stderr,
		`The StatefulSet "web" is invalid: spec.updateStrategy.rollingUpdate: Invalid value: {"Partition":0,"MaxUnavailable":1}: only allowed for updateStrategy 'RollingUpdate'`)
	framework.WantLines(t, k.Run(t, "get", sts, "-o", "jsonpath={.spec.updateStrategy.type}").MustSucceed(t).Stdout, "RollingUpdate")
}

// Seed 002 shows strategy.type: Recreate failing beside a defaulted
// rollingUpdate. Deployments are protected today: spec.strategy carries
// $retainKeys, so kubectl's patch drops the defaulted sibling.
func TestSeed002DeploymentRecreateSavedByRetainKeys(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const deploy = "deployment.apps/nginx-deployment"

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed003-v1.yaml").MustSucceed(t).Stdout, deploy+" created")
	framework.WantLines(t, k.Run(t, "get", deploy, "-o", "jsonpath={.spec.strategy}").MustSucceed(t).Stdout,
		`{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"}`)
	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/seed002-recreate-deployment.yaml").MustSucceed(t).Stdout, deploy+" configured")
	framework.WantLines(t, k.Run(t, "get", deploy, "-o", "jsonpath={.spec.strategy}").MustSucceed(t).Stdout, `{"type":"Recreate"}`)
}
