package webhook_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// A StatefulSet undo restores the pod template and nothing else; its
// repair of last-applied takes only the template from the revision and
// keeps what the newer manifest set outside it (minReadySeconds, replicas).
func TestStatefulSetUndoRepairKeepsWhatTheUndoDidNotRestore(t *testing.T) {
	const (
		short    = "statefulset/my-wonderhoy-app"
		selector = "app=my-wonderhoy-app"
	)
	tests := map[string]struct {
		v2 string
		// field is the spec field outside the template that v2 set, and
		// want its value in last-applied and live after the undo.
		field, want string
		// v3, when set, is applied after the undo; afterV3 is the field's
		// live value then.
		v3, afterV3 string
	}{
		"minReadySeconds that v2 added is deleted by v3, which drops it": {
			v2: "testdata/statefulset-minready-v2.yaml", field: "minReadySeconds", want: "10",
			v3: seeds + "seed004-v3.yaml", afterV3: "",
		},
		"replicas that v2 scaled to 5 stay 5": {
			v2: "testdata/statefulset-scaled-v2.yaml", field: "replicas", want: "5",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			framework.ApplyPredicted(t, k, seeds+"seed004-v1.yaml").MustSucceed(t)
			f.WaitForRevisions(t, selector, 1)
			framework.ApplyPredicted(t, k, tc.v2).MustSucceed(t)
			f.WaitForRevisions(t, selector, 2)

			undo := k.Run(t, "rollout", "undo", short, "--to-revision=1").MustSucceed(t)
			framework.WantLines(t, undo.Stderr, kubectlUndoWarning("statefulsets", "my-wonderhoy-app"),
				staleRepairedWarning("StatefulSet", f.Namespace, "my-wonderhoy-app", "statefulsets.apps/my-wonderhoy-app"))

			la := viewLastApplied(t, k, short)
			spec := la["spec"].(map[string]any)
			if got := fmt.Sprint(spec[tc.field]); got != tc.want {
				t.Errorf("last-applied spec.%s after the undo = %s, want %s", tc.field, got, tc.want)
			}
			if env := fmt.Sprint(containerOf(la)["env"]); !strings.Contains(env, "TO_BE_DELETED") {
				t.Errorf("last-applied env after the undo = %s, want revision 1's with TO_BE_DELETED", env)
			}
			framework.WantLines(t, k.JSONPath(t, short, "{.spec."+tc.field+"}"), tc.want)
			if tc.v3 == "" {
				return
			}
			framework.WantLines(t, framework.ApplyPredicted(t, k, tc.v3).MustSucceed(t).Stdout, "statefulset.apps/my-wonderhoy-app configured")
			framework.WantLines(t, k.JSONPath(t, short, "{.spec."+tc.field+"}"), lines(tc.afterV3)...)
			framework.WantLines(t, k.JSONPath(t, short, "{.spec.template.spec.containers[0].env}"), `[{"name":"ANOTHER_ENV","value":"who cares?"}]`)
		})
	}
}

// A Deployment undo after two restarts restores the first restart's
// restartedAt, which kubectl-rollout stamped: no manifest had it, so
// last-applied must not get it (else the next apply of the same manifest
// deletes it and rolls every pod).
func TestDeploymentUndoAfterRestartsLeavesRestartedAtOutOfLastApplied(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const short = "deployment/web"
	framework.ApplyPredicted(t, k, "testdata/deployment-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=web", 1)
	for i := 2; i <= 3; i++ {
		// restartedAt has a resolution of one second.
		time.Sleep(1100 * time.Millisecond)
		framework.WantLines(t, k.Run(t, "rollout", "restart", short).MustSucceed(t).Stdout, "deployment.apps/web restarted")
		f.WaitForRevisions(t, "app=web", i)
	}
	lastAppliedBefore := k.Run(t, "apply", "view-last-applied", short, "-o", "json").MustSucceed(t).Stdout

	undo := k.Run(t, "rollout", "undo", short).MustSucceed(t)
	framework.WantLines(t, undo.Stdout, "deployment.apps/web rolled back")
	framework.WantLines(t, undo.Stderr, kubectlUndoWarning("deployments", "web"))
	lastApplied := k.Run(t, "apply", "view-last-applied", short, "-o", "json").MustSucceed(t).Stdout
	if lastApplied != lastAppliedBefore {
		t.Errorf("last-applied after the undo:\n%s\nwant it unchanged:\n%s", lastApplied, lastAppliedBefore)
	}
	restartedAt := k.JSONPath(t, short, "{.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}")

	apply := framework.ApplyPredicted(t, k, "testdata/deployment-v1.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web unchanged")
	framework.WantLines(t, apply.Stderr)
	framework.WantLines(t, k.JSONPath(t, short, "{.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}"), restartedAt)
	rs, err := f.Client.AppsV1().ReplicaSets(f.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Items) != 3 {
		t.Errorf("%d ReplicaSets after the apply, want the 3 of v1 and the two restarts", len(rs.Items))
	}
}

// staleRepairedWarning is the stale-last-applied repair's warning for an
// undo to revision 1.
func staleRepairedWarning(kind, namespace, name, resource string) string {
	return fmt.Sprintf("Warning: [stale-last-applied] %s %s/%s: rollout undo restored revision 1 but last-applied still described "+
		"the newer manifest; apply-hygiene rewrote last-applied to match revision 1 (kubectl's rollout undo does not), so the next kubectl apply deletes what "+
		"your manifest no longer has. Check with: kubectl apply view-last-applied %s -n %s", kind, namespace, name, resource, namespace)
}

func viewLastApplied(t *testing.T, k framework.Kubectl, object string) map[string]any {
	t.Helper()
	var la map[string]any
	out := k.Run(t, "apply", "view-last-applied", object, "-o", "json").MustSucceed(t).Stdout
	if err := json.Unmarshal([]byte(out), &la); err != nil {
		t.Fatalf("decoding last-applied: %v", err)
	}
	return la
}

// containerOf is the first container of a decoded object or manifest.
func containerOf(obj map[string]any) map[string]any {
	spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	return spec["containers"].([]any)[0].(map[string]any)
}

// lines is s as WantLines expects it: no lines for "".
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// kubectl rollout undo of a Deployment restores its annotations from the
// ReplicaSet too (kubectl's DeploymentRollbacker): the repair covers them
// as it covers the template, so last-applied says v1 again, with the
// annotation v1 set and without the one a robot stamped, and applying v1
// changes nothing but last-applied.
func TestDeploymentUndoRepairCoversTheAnnotationsItRestores(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const short = "deployment/web"
	framework.ApplyPredicted(t, k, "testdata/deployment-annotated-v1.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=web", 1)
	framework.ApplyPredicted(t, k, "testdata/deployment-annotated-v2.yaml").MustSucceed(t)
	f.WaitForRevisions(t, "app=web", 2)
	robot := k.Run(t, "annotate", short, "reloader.example/seen=1", "--field-manager=reloader").MustSucceed(t)
	framework.WantLines(t, robot.Stdout, "deployment.apps/web annotated")
	framework.WantLines(t, robot.Stderr)

	undo := k.Run(t, "rollout", "undo", short).MustSucceed(t)
	framework.WantLines(t, undo.Stdout, "deployment.apps/web rolled back")
	framework.WantLines(t, undo.Stderr, kubectlUndoWarning("deployments", "web"),
		staleRepairedWarning("Deployment", f.Namespace, "web", "deployments.apps/web"))
	la := viewLastApplied(t, k, short)
	if got := fmt.Sprint(la["metadata"].(map[string]any)["annotations"]); got != "map[team:a]" {
		t.Errorf("last-applied annotations after the undo = %s, want map[team:a]", got)
	}

	template := k.JSONPath(t, short, "{.spec.template}")
	apply := framework.ApplyPredicted(t, k, "testdata/deployment-annotated-v1.yaml").MustSucceed(t)
	// last-applied had TO_BE_DELETED's name alone (the repair proves no
	// more): the apply writes v1's last-applied and nothing else.
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	framework.WantLines(t, apply.Stderr)
	framework.WantLines(t, k.JSONPath(t, short, "{.spec.template}"), template)
}
