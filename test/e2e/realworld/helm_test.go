package realworld_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// helmTimeout bounds one helm run.
const helmTimeout = 2 * time.Minute

// ruleID finds a finding of apply-hygiene anywhere in a line: helm prints
// the API server's warnings through its own logger.
var ruleID = regexp.MustCompile(`\[(imperative-edit|apply-reverts-drift|orphaned-field|stale-last-applied|defaulted-dependent|` +
	`replicas-reset|missing-last-applied|invalid-last-applied|last-applied-too-large)\]`)

// helmRelease installs the chart that `helm create` scaffolds, upgrades it
// with a changed value and rolls it back: Helm 3 writes no last-applied,
// so nothing is reported and nothing denied.
func helmRelease(t *testing.T, lg *ledger) {
	f := framework.New(t)
	h := helm{t: t, kubeconfig: f.Kubectl.Kubeconfig, namespace: f.Namespace, home: t.TempDir()}
	chart := filepath.Join(t.TempDir(), "hygiene-demo")
	if _, err := h.run("create", chart); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		step string
		args []string
	}{
		{"helm install", []string{"install", "demo", chart}},
		{"helm upgrade with a changed value", []string{"upgrade", "demo", chart, "--set", "replicaCount=2,image.tag=1.27.0"}},
		{"helm rollback", []string{"rollback", "demo", "1"}},
	}
	object := "helm release " + f.Namespace + "/demo"
	for _, s := range steps {
		out, err := h.run(s.args...)
		lg.record(unexpectedRuleLines(object, s.step, "helm "+strings.Join(s.args, " "), out), nil)
		if err != nil {
			t.Errorf("%s: %v", s.step, err)
		}
	}
}

// unexpectedRuleLines returns a false finding for each line of a tool's
// output that names a rule of apply-hygiene.
func unexpectedRuleLines(object, step, command, output string) []mismatch {
	var out []mismatch
	for _, line := range strings.Split(output, "\n") {
		m := ruleID.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		what, action := falseWarning, warn
		if strings.Contains(line, "denied the request") {
			what, action = falseDenial, deny
		}
		out = append(out, mismatch{Object: object, Step: step, Command: command, What: what, Finding: finding{Action: action, Rule: m[1]}, Line: line})
	}
	return out
}

// helm runs the pinned helm against the test's control plane, with its
// cache and configuration in home.
type helm struct {
	t                           *testing.T
	kubeconfig, namespace, home string
}

// run runs helm and returns its stdout and stderr together.
func (h helm) run(args ...string) (string, error) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.t.Context(), helmTimeout)
	defer cancel()
	bin := filepath.Join(filepath.Dir(framework.KubectlPath()), "helm")
	cmd := exec.CommandContext(ctx, bin, append(args, "--namespace", h.namespace)...)
	cmd.Env = append(cmd.Environ(), "KUBECONFIG="+h.kubeconfig,
		"HELM_CACHE_HOME="+h.home+"/cache", "HELM_CONFIG_HOME="+h.home+"/config", "HELM_DATA_HOME="+h.home+"/data")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	h.t.Logf("$ helm %s\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
	if err != nil {
		err = fmt.Errorf("running helm %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String() + stderr.String(), err
}
