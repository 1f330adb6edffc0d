package webhook_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 004 with apply-hygiene: rollout undo gets last-applied repaired to
// the restored revision, so the next apply deletes what the manifest
// dropped.
func TestRolloutUndoRepairsLastApplied(t *testing.T) {
	tests := map[string]struct {
		kind, resource, name, selector string
		v1, v2, v3                     string
		undoArgs                       []string
		v1Image                        string
		// rebuilt: no revision keeps a manifest (a Deployment's
		// ReplicaSets), so the repair proves of TO_BE_DELETED, which the
		// v2 apply deleted, only its name.
		rebuilt bool
	}{
		"StatefulSet (seed 004)": {
			kind: "StatefulSet", resource: "statefulsets", name: "my-wonderhoy-app", selector: "app=my-wonderhoy-app",
			v1: seeds + "seed004-v1.yaml", v2: seeds + "seed004-v2.yaml", v3: seeds + "seed004-v3.yaml",
			undoArgs: []string{"--to-revision=1"}, v1Image: "nginx:latest",
		},
		"Deployment": {
			kind: "Deployment", resource: "deployments", name: "web", selector: "app=web",
			v1: "testdata/deployment-v1.yaml", v2: "testdata/deployment-v2.yaml", v3: "testdata/deployment-v3.yaml",
			v1Image: "nginx:1.14.2", rebuilt: true,
		},
		"DaemonSet": {
			kind: "DaemonSet", resource: "daemonsets", name: "agent", selector: "app=agent",
			v1: "testdata/daemonset-v1.yaml", v2: "testdata/daemonset-v2.yaml", v3: "testdata/daemonset-v3.yaml",
			v1Image: "agent:1",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			object := fmt.Sprintf("%s.apps/%s", lower(tc.kind), tc.name)
			short := fmt.Sprintf("%s/%s", lower(tc.kind), tc.name)
			resource := fmt.Sprintf("%ss.apps/%s", lower(tc.kind), tc.name) // as the messages name it

			framework.ApplyPredicted(t, k, tc.v1).MustSucceed(t)
			f.WaitForRevisions(t, tc.selector, 1)
			framework.ApplyPredicted(t, k, tc.v2).MustSucceed(t)
			f.WaitForRevisions(t, tc.selector, 2)

			undo := k.Run(t, append([]string{"rollout", "undo", short}, tc.undoArgs...)...).MustSucceed(t)
			framework.WantLines(t, undo.Stdout, object+" rolled back")
			framework.WantLines(t, undo.Stderr,
				fmt.Sprintf("Warning: resource %s/%s was previously managed with 'kubectl apply'. Rolling back will not update the "+
					"kubectl.kubernetes.io/last-applied-configuration annotation, which may cause unexpected behavior on future "+
					"'kubectl apply' operations. Consider using 'kubectl apply' with your previous configuration file instead.", tc.resource, tc.name),
				fmt.Sprintf("Warning: [stale-last-applied] %s %s/%s: rollout undo restored revision 1 but last-applied still described "+
					"the newer manifest; apply-hygiene rewrote last-applied to match revision 1 (kubectl's rollout undo does not), so the next kubectl apply deletes what "+
					"your manifest no longer has. Check with: kubectl apply view-last-applied %s -n %s", tc.kind, f.Namespace, tc.name, resource, f.Namespace))

			// view-last-applied now shows v1's container.
			var la struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Image string `json:"image"`
								Env   []map[string]string
							} `json:"containers"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			}
			out := k.Run(t, "apply", "view-last-applied", short, "-o", "json").MustSucceed(t).Stdout
			if err := json.Unmarshal([]byte(out), &la); err != nil {
				t.Fatalf("decoding last-applied: %v", err)
			}
			c := la.Spec.Template.Spec.Containers[0]
			wantEnv := []map[string]string{{"name": "TO_BE_DELETED", "value": "needs to be deleted!"}, {"name": "ANOTHER_ENV", "value": "who cares?"}}
			if tc.rebuilt {
				wantEnv[0] = map[string]string{"name": "TO_BE_DELETED"}
			}
			if diff := cmp.Diff(wantEnv, c.Env); c.Image != tc.v1Image || diff != "" {
				t.Errorf("last-applied after undo: image %q (want %q), env (-want +got):\n%s", c.Image, tc.v1Image, diff)
			}

			apply := framework.ApplyPredicted(t, k, tc.v3).MustSucceed(t)
			framework.WantLines(t, apply.Stdout, object+" configured")
			if tc.rebuilt {
				// last-applied has TO_BE_DELETED's name, not its value,
				// which the undo (kubectl) set since the last apply: v3
				// deletes it and says what it discards.
				framework.WantMatch(t, apply.Stderr, regexp.QuoteMeta(fmt.Sprintf("Warning: [apply-reverts-drift] %s %s/%s: this apply removes "+
					"spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED], discarding "+
					`{"name":"TO_BE_DELETED","value":"needs to be deleted!"} set by kubectl at `, tc.kind, f.Namespace, tc.name))+
					`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`+regexp.QuoteMeta(fmt.Sprintf(" since the last apply. To keep that value, put it in your manifest "+
					"before you apply; see every drifted field with: kubectl hygiene explain %s -n %s", resource, f.Namespace)))
			} else {
				framework.WantLines(t, apply.Stderr)
			}
			framework.WantLines(t, k.JSONPath(t, short, "{.spec.template.spec.containers[0].env}"), `[{"name":"ANOTHER_ENV","value":"who cares?"}]`)
		})
	}
}

func lower(kind string) string {
	switch kind {
	case "StatefulSet":
		return "statefulset"
	case "DaemonSet":
		return "daemonset"
	}
	return "deployment"
}
