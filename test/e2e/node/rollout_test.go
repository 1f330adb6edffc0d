package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/hack/node"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 004's story for a Deployment on Pods that really run: v1 and v2
// roll out completely (ReplicaSets with running Pods), rollout undo brings
// v1's ReplicaSet back and apply-hygiene repairs last-applied to it, and
// the v3 apply then deletes what v1's manifest dropped, with the same
// lines as in url mode (test/e2e/webhook TestRolloutUndoRepairsLastApplied).
// The manifests' nginx images are the pause image under their names.
func TestRolloutUndoAfterACompletedRolloutRepairsLastApplied(t *testing.T) {
	installed(t)
	for _, tag := range []string{"1.14.2", "broken", "fixed"} {
		if err := framework.Node(t).TagImage(t.Context(), node.DefaultSandboxImage, "docker.io/library/nginx:"+tag); err != nil {
			t.Fatal(err)
		}
	}
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", webhookFiles+"deployment-v1.yaml").MustSucceed(t)
	rolledOut(t, k, "nginx:1.14.2")
	k.Run(t, "apply", "-f", webhookFiles+"deployment-v2.yaml").MustSucceed(t)
	rolledOut(t, k, "nginx:broken")

	undo := k.Run(t, "rollout", "undo", "deployment/web").MustSucceed(t)
	framework.WantLines(t, undo.Stdout, "deployment.apps/web rolled back")
	framework.WantLines(t, undo.Stderr,
		"Warning: resource deployments/web was previously managed with 'kubectl apply'. Rolling back will not update the "+
			"kubectl.kubernetes.io/last-applied-configuration annotation, which may cause unexpected behavior on future "+
			"'kubectl apply' operations. Consider using 'kubectl apply' with your previous configuration file instead.",
		fmt.Sprintf("Warning: [stale-last-applied] Deployment %s/web: rollout undo restored revision 1 but last-applied still described "+
			"the newer manifest; apply-hygiene rewrote last-applied to match revision 1 (kubectl's rollout undo does not), so the next kubectl apply deletes what "+
			"your manifest no longer has. Check with: kubectl apply view-last-applied deployments.apps/web -n %s", f.Namespace, f.Namespace))
	rolledOut(t, k, "nginx:1.14.2")

	// A ReplicaSet keeps no manifest: the repair proves of TO_BE_DELETED,
	// which the v2 apply deleted, only its name.
	wantLastApplied(t, k, "deployment/web", "nginx:1.14.2",
		[]map[string]string{{"name": "TO_BE_DELETED"}, {"name": "ANOTHER_ENV", "value": "who cares?"}})

	apply := k.Run(t, "apply", "-f", webhookFiles+"deployment-v3.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	framework.WantMatch(t, apply.Stderr, regexp.QuoteMeta(fmt.Sprintf("Warning: [apply-reverts-drift] Deployment %s/web: this apply removes "+
		"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED], discarding "+
		`{"name":"TO_BE_DELETED","value":"needs to be deleted!"} set by kubectl at `, f.Namespace))+
		`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`+regexp.QuoteMeta(fmt.Sprintf(" since the last apply. To keep that value, put it in your manifest "+
		"before you apply; see every drifted field with: kubectl hygiene explain deployments.apps/web -n %s", f.Namespace)))
	rolledOut(t, k, "nginx:fixed")
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].env}"), `[{"name":"ANOTHER_ENV","value":"who cares?"}]`)
}

// rolledOut waits for deployment/web's rollout and checks that its three
// Pods run image, each in its own ReplicaSet's revision.
func rolledOut(t *testing.T, k framework.Kubectl, image string) {
	t.Helper()
	k.Run(t, "rollout", "status", "deployment/web", "--timeout=90s").MustSucceed(t)
	framework.Eventually(t, time.Minute, "3 running Pods of "+image, func(context.Context) (bool, error) {
		res := k.Run(t, "get", "pods", "-l", "app=web", "--field-selector=status.phase=Running", "-o",
			`jsonpath={range .items[?(@.metadata.deletionTimestamp)]}x{end}{range .items[*]}{.spec.containers[0].image}{"\n"}{end}`)
		return res.ExitCode == 0 && res.Stdout == strings.Repeat(image+"\n", 3), nil
	})
}

// Seed 004 itself, a StatefulSet whose Pods start one by one and whose
// nginx:latest is pulled on every start (from the node's local registry,
// where the pause image stands in for every seed image): v1 and v2 roll
// out completely, rollout undo --to-revision=1 restores v1 from its
// ControllerRevision with last-applied repaired as in url mode, and v3
// deletes TO_BE_DELETED without a word.
func TestStatefulSetRolloutUndoAfterACompletedRolloutRepairsLastApplied(t *testing.T) {
	installed(t)
	n := framework.Node(t)
	pause, err := imageTarball("pause.tar")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"latest", "a-broken-version", "a-fixed-version"} {
		if err := n.Publish(t.Context(), pause, "library/nginx:"+tag); err != nil {
			t.Fatal(err)
		}
	}
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", seeds+"seed004-v1.yaml").MustSucceed(t)
	statefulSetRolledOut(t, k, "nginx:latest")
	k.Run(t, "apply", "-f", seeds+"seed004-v2.yaml").MustSucceed(t)
	statefulSetRolledOut(t, k, "nginx:a-broken-version")

	undo := k.Run(t, "rollout", "undo", "statefulset/my-wonderhoy-app", "--to-revision=1").MustSucceed(t)
	framework.WantLines(t, undo.Stdout, "statefulset.apps/my-wonderhoy-app rolled back")
	framework.WantLines(t, undo.Stderr,
		"Warning: resource statefulsets/my-wonderhoy-app was previously managed with 'kubectl apply'. Rolling back will not update the "+
			"kubectl.kubernetes.io/last-applied-configuration annotation, which may cause unexpected behavior on future "+
			"'kubectl apply' operations. Consider using 'kubectl apply' with your previous configuration file instead.",
		fmt.Sprintf("Warning: [stale-last-applied] StatefulSet %s/my-wonderhoy-app: rollout undo restored revision 1 but last-applied still described "+
			"the newer manifest; apply-hygiene rewrote last-applied to match revision 1 (kubectl's rollout undo does not), so the next kubectl apply deletes what "+
			"your manifest no longer has. Check with: kubectl apply view-last-applied statefulsets.apps/my-wonderhoy-app -n %s", f.Namespace, f.Namespace))
	statefulSetRolledOut(t, k, "nginx:latest")
	wantLastApplied(t, k, "statefulset/my-wonderhoy-app", "nginx:latest",
		[]map[string]string{{"name": "TO_BE_DELETED", "value": "needs to be deleted!"}, {"name": "ANOTHER_ENV", "value": "who cares?"}})

	apply := k.Run(t, "apply", "-f", seeds+"seed004-v3.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "statefulset.apps/my-wonderhoy-app configured")
	framework.WantLines(t, apply.Stderr)
	statefulSetRolledOut(t, k, "nginx:a-fixed-version")
	framework.WantLines(t, k.JSONPath(t, "statefulset/my-wonderhoy-app", "{.spec.template.spec.containers[0].env}"), `[{"name":"ANOTHER_ENV","value":"who cares?"}]`)
}

// statefulSetRolledOut waits for the seed's StatefulSet to roll out and
// checks that its three Pods, in order, run image.
func statefulSetRolledOut(t *testing.T, k framework.Kubectl, image string) {
	t.Helper()
	if k.Run(t, "rollout", "status", "statefulset/my-wonderhoy-app", "--timeout=100s").ExitCode != 0 {
		dumpNode(t, k)
		t.Fatal("the StatefulSet did not roll out")
	}
	framework.Eventually(t, time.Minute, "3 running Pods of "+image, func(context.Context) (bool, error) {
		res := k.Run(t, "get", "pods", "-l", "app=my-wonderhoy-app", "--field-selector=status.phase=Running", "-o",
			`jsonpath={range .items[?(@.metadata.deletionTimestamp)]}x{end}{range .items[*]}{.metadata.name} {.spec.containers[0].image}{"\n"}{end}`)
		want := fmt.Sprintf("my-wonderhoy-app-0 %[1]s\nmy-wonderhoy-app-1 %[1]s\nmy-wonderhoy-app-2 %[1]s\n", image)
		return res.ExitCode == 0 && res.Stdout == want, nil
	})
}

// wantLastApplied checks the image and env of the first container in the
// object's last-applied, as kubectl apply view-last-applied shows it.
func wantLastApplied(t *testing.T, k framework.Kubectl, object, image string, env []map[string]string) {
	t.Helper()
	var la struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Image string              `json:"image"`
						Env   []map[string]string `json:"env"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	out := k.Run(t, "apply", "view-last-applied", object, "-o", "json").MustSucceed(t).Stdout
	if err := json.Unmarshal([]byte(out), &la); err != nil {
		t.Fatalf("decoding last-applied: %v", err)
	}
	c := la.Spec.Template.Spec.Containers[0]
	if diff := cmp.Diff(env, c.Env); c.Image != image || diff != "" {
		t.Errorf("last-applied of %s: image %q (want %q), env (-want +got):\n%s", object, c.Image, image, diff)
	}
}
