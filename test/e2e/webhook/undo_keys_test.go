package webhook_test

import (
	"encoding/json"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// nodeSelectorWeb is a Deployment web whose pod template has image and
// nodeSelector, for the undo tests of single-value maps.
func nodeSelectorWeb(image, nodeSelector string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      nodeSelector: %s
      containers:
      - name: nginx
        image: %s
`, nodeSelector, image)
}

// An undo repair writes a restored nodeSelector (one value in the schema,
// a map to kubectl's strategic merge) into last-applied only where each
// key it adds is proven a manifest's: a key a person added beside the
// manifest's would be deleted by the next apply, which deletes the keys of
// last-applied that its manifest lacks (docs/rules.md, stale-last-applied).
func TestDeploymentUndoRepairOfANodeSelector(t *testing.T) {
	tests := map[string]struct {
		// v1 and v2 are the nodeSelectors of the two manifests; patch, when
		// set, is a break-glass person's patch of it between them.
		v1, patch, v2 string
		// repaired is last-applied's nodeSelector after the undo to the
		// revision before v2's, and final the live one after v2 is applied
		// again.
		repaired, final string
	}{
		"a person's key in the restored revision stays out of last-applied, and the next apply keeps it": {
			v1: `{a: "1"}`, patch: `{"spec":{"template":{"spec":{"nodeSelector":{"b":"2"}}}}}`, v2: `{a: "1", c: "3"}`,
			repaired: `{"a":"1","c":"3"}`, final: `{"a":"1","b":"2","c":"3"}`,
		},
		"a key of v1 that v2 dropped is repaired, and the next apply of v2 deletes it": {
			v1: `{a: "1", c: "3"}`, v2: `{a: "1"}`,
			repaired: `{"a":"1","c":"3"}`, final: `{"a":"1"}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			const short = "deployment/web"
			revisions := 1
			k.RunWithInput(t, nodeSelectorWeb("web:1", tc.v1), "apply", "-f", "-").MustSucceed(t)
			f.WaitForRevisions(t, "app=web", revisions)
			if tc.patch != "" {
				f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: breakGlassGroup})
				bob := f.KubectlAs(t, "oncall-bob", breakGlassGroup)
				bob.Run(t, "patch", short, "-p", tc.patch).MustSucceed(t)
				revisions++
				f.WaitForRevisions(t, "app=web", revisions)
			}
			k.RunWithInput(t, nodeSelectorWeb("web:2", tc.v2), "apply", "-f", "-").MustSucceed(t)
			f.WaitForRevisions(t, "app=web", revisions+1)

			k.Run(t, "rollout", "undo", short).MustSucceed(t)
			framework.WantLines(t, k.JSONPath(t, short, "{.spec.template.spec.containers[0].image}"), "web:1")
			la := viewLastApplied(t, k, short)
			got, err := json.Marshal(la["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"])
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.repaired {
				t.Errorf("last-applied nodeSelector after the undo = %s, want %s", got, tc.repaired)
			}
			if got := containerOf(la)["image"]; got != "web:1" {
				t.Errorf("last-applied image after the undo = %v, want the restored web:1", got)
			}

			k.RunWithInput(t, nodeSelectorWeb("web:2", tc.v2), "apply", "-f", "-").MustSucceed(t)
			framework.WantLines(t, k.JSONPath(t, short, "{.spec.template.spec.nodeSelector}"), tc.final)
		})
	}
}
