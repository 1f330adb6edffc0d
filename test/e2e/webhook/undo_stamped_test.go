package webhook_test

import (
	"fmt"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// An undo behind another mutating webhook that stamps the pod template:
// the restored template matches no revision exactly, so apply-hygiene
// cannot prove the undo. It must let the emergency action through, warn
// that last-applied may now be stale, and leave last-applied alone.
func TestRolloutUndoBehindAStampingWebhook(t *testing.T) {
	tests := map[string]struct {
		kind, resource, name, selector string
		v1, v2                         string
	}{
		"Deployment": {
			kind: "Deployment", resource: "deployments", name: "web", selector: "app=web",
			v1: "testdata/deployment-v1.yaml", v2: "testdata/deployment-v2.yaml",
		},
		"StatefulSet": {
			kind: "StatefulSet", resource: "statefulsets", name: "my-wonderhoy-app", selector: "app=my-wonderhoy-app",
			v1: seeds + "seed004-v1.yaml", v2: seeds + "seed004-v2.yaml",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			startStamper(t, f)
			k := f.Kubectl
			short := fmt.Sprintf("%s/%s", lower(tc.kind), tc.name)
			resource := fmt.Sprintf("%ss.apps/%s", lower(tc.kind), tc.name) // as the messages name it

			k.Run(t, "apply", "-f", tc.v1).MustSucceed(t)
			f.WaitForRevisions(t, tc.selector, 1)
			// The stamp is nobody's field: no warning about it.
			framework.WantLines(t, k.Run(t, "apply", "-f", tc.v2).MustSucceed(t).Stderr)
			f.WaitForRevisions(t, tc.selector, 2)
			stampBefore := k.JSONPath(t, short, "{.spec.template.metadata.annotations.example\\.com/stamped-at}")
			lastAppliedBefore := k.Run(t, "apply", "view-last-applied", short, "-o", "json").MustSucceed(t).Stdout

			undo := k.Run(t, "rollout", "undo", short).MustSucceed(t)
			framework.WantLines(t, undo.Stdout, fmt.Sprintf("%s.apps/%s rolled back", lower(tc.kind), tc.name))
			framework.WantLines(t, undo.Stderr,
				kubectlUndoWarning(tc.resource, tc.name),
				fmt.Sprintf("Warning: [stale-last-applied] %s %s/%s: this write looks like a rollout undo, but its pod template "+
					"matches none of the revisions exactly (another mutating webhook may have changed it, the revision predates "+
					"a default the server now adds, an older kubectl dropped template fields it does not know, or a tool restored only the revision's pod spec), so apply-hygiene left last-applied as it was. It may still describe the newer "+
					"manifest; then the next kubectl apply will not delete what the restored template has and your manifest does "+
					"not. See where live differs from last-applied with: kubectl hygiene explain %s -n %s",
					tc.kind, f.Namespace, tc.name, resource, f.Namespace))

			if stamp := k.JSONPath(t, short, "{.spec.template.metadata.annotations.example\\.com/stamped-at}"); stamp == stampBefore || stamp == "" {
				t.Errorf("the stamping webhook did not stamp the undo: %s = %q, %q before", stampAnnotation, stamp, stampBefore)
			}
			lastApplied := k.Run(t, "apply", "view-last-applied", short, "-o", "json").MustSucceed(t).Stdout
			if lastApplied != lastAppliedBefore {
				t.Errorf("last-applied changed on an unproven undo:\n%s\nwas:\n%s", lastApplied, lastAppliedBefore)
			}
		})
	}
}

// kubectlUndoWarning is what kubectl 1.36 and later print before rolling
// back an object that kubectl apply manages.
func kubectlUndoWarning(resource, name string) string {
	return fmt.Sprintf("Warning: resource %s/%s was previously managed with 'kubectl apply'. Rolling back will not update the "+
		"kubectl.kubernetes.io/last-applied-configuration annotation, which may cause unexpected behavior on future "+
		"'kubectl apply' operations. Consider using 'kubectl apply' with your previous configuration file instead.", resource, name)
}
