package audit_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const (
	// fixedNote is the note of the AuditFixed event on web.
	fixedNote = "apply-hygiene's audit fixed it (field manager apply-hygiene-audit): removed " + restartedAtPath + " (rolls the pods)"
)

// restartedAndApplied applies testdata/web.yaml, restarts it with kubectl
// rollout restart and applies it again: restartedAt, which no apply
// removes, is an orphaned field. It returns restartedAt's value.
func restartedAndApplied(t *testing.T, f *framework.Framework) string {
	t.Helper()
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	// Read from the object the restart wrote, as the API server answered
	// it: the server's audit, every 2 s, may remove it before a get.
	restartedAt := k.Run(t, "rollout", "restart", "deployment/web", "-o", "jsonpath="+restartedAtExpr).MustSucceed(t).Stdout
	if restartedAt == "" {
		t.Fatal("kubectl rollout restart set no restartedAt")
	}
	k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	return restartedAt
}

// events are the events of reason on deployment web in the test's
// namespace, as "<type> <reason> <action>: <note>".
func events(ctx context.Context, t *testing.T, f *framework.Framework, reason string) ([]string, error) {
	t.Helper()
	list, err := f.Client.EventsV1().Events(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "Deployment" && e.Regarding.Name == "web" && e.Reason == reason {
			out = append(out, e.Type+" "+e.Reason+" "+e.Action+": "+e.Note)
		}
	}
	return out, nil
}
