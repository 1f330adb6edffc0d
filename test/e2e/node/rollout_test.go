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
			"the newer manifest; apply-hygiene rewrote last-applied to match revision 1 (this supersedes kubectl's warning that "+
			"rolling back will not update last-applied), so the next kubectl apply deletes what "+
			"your manifest no longer has. Check with: kubectl apply view-last-applied deployment/web -n %s", f.Namespace, f.Namespace))
	rolledOut(t, k, "nginx:1.14.2")

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
	out := k.Run(t, "apply", "view-last-applied", "deployment/web", "-o", "json").MustSucceed(t).Stdout
	if err := json.Unmarshal([]byte(out), &la); err != nil {
		t.Fatalf("decoding last-applied: %v", err)
	}
	// A ReplicaSet keeps no manifest: the repair proves of TO_BE_DELETED,
	// which the v2 apply deleted, only its name.
	c := la.Spec.Template.Spec.Containers[0]
	wantEnv := []map[string]string{{"name": "TO_BE_DELETED"}, {"name": "ANOTHER_ENV", "value": "who cares?"}}
	if diff := cmp.Diff(wantEnv, c.Env); c.Image != "nginx:1.14.2" || diff != "" {
		t.Errorf("last-applied after undo: image %q (want nginx:1.14.2), env (-want +got):\n%s", c.Image, diff)
	}

	apply := k.Run(t, "apply", "-f", webhookFiles+"deployment-v3.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	framework.WantMatch(t, apply.Stderr, regexp.QuoteMeta(fmt.Sprintf("Warning: [apply-reverts-drift] Deployment %s/web: this apply removes "+
		"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED], discarding "+
		`{"name":"TO_BE_DELETED","value":"needs to be deleted!"} set by kubectl at `, f.Namespace))+
		`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`+regexp.QuoteMeta(fmt.Sprintf(" since the last apply. To keep that value, put it in your manifest "+
		"before you apply; see every drifted field with: kubectl hygiene explain deployment/web -n %s", f.Namespace)))
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
