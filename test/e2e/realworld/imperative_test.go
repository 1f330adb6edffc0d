package realworld_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// imperativeUse works with a Deployment that was never applied, the
// imperative way: it has no last-applied, so apply-hygiene has nothing to
// say and nothing to deny.
func imperativeUse(t *testing.T, lg *ledger) {
	w := workload{project: "imperative", file: "kubectl create deployment", kind: "Deployment", name: "web"}
	l := &life{t: t, f: framework.New(t), w: w, ledger: lg}
	steps := []struct {
		step string
		args []string
	}{
		{"create deployment", []string{"create", "deployment", "web", "--image=nginx:1.27"}},
		{"set image", []string{"set", "image", "deployment/web", "nginx=nginx:1.28"}},
		{"scale", []string{"scale", "deployment/web", "--replicas=3"}},
		{"patch", []string{"patch", "deployment/web", "-p", `{"spec":{"template":{"metadata":{"labels":{"tier":"frontend"}}}}}`}},
		{"label", []string{"label", "deployment/web", "team=payments"}},
		{"rollout restart", []string{"rollout", "restart", "deployment/web"}},
	}
	for _, s := range steps {
		l.run(s.step, nothing, "", s.args...)
	}
	l.waitObserved()
	l.run("rollout undo", nothing, "", "rollout", "undo", "deployment/web")
}
