package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// prediction is what `kubectl hygiene diff -f` says of an apply.
type prediction struct {
	code     int
	findings []struct {
		Rule, Action, Path, Message string
	}
}

// predict runs `kubectl hygiene diff -f MANIFEST -o json` against the
// cluster (no --live) as k's identity, in k's namespace.
func predict(t *testing.T, bin string, k framework.Kubectl, manifest string) prediction {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "diff", "-f", manifest, "-o", "json", "--kubeconfig", k.Kubeconfig, "-n", k.Namespace)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var p prediction
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		p.code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running kubectl hygiene diff: %v", err)
	}
	t.Logf("$ kubectl hygiene diff -f %s -o json (exit %d)\n%s%s", manifest, p.code, stdout.String(), stderr.String())
	if p.code > 1 {
		t.Fatalf("kubectl hygiene diff failed with exit %d", p.code)
	}
	var doc struct {
		Findings []struct{ Rule, Action, Path, Message string } `json:"findings"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("decoding the output of kubectl hygiene diff: %v", err)
	}
	p.findings = doc.Findings
	return p
}

// warnings are the messages of the Warning: lines kubectl printed.
func warnings(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if m, ok := strings.CutPrefix(l, "Warning: "); ok {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// ruleOf is the [rule-id] a message starts with.
func ruleOf(message string) string {
	if !strings.HasPrefix(message, "[") {
		return ""
	}
	rule, _, _ := strings.Cut(message[1:], "]")
	return rule
}

// wantPredicted checks that the warnings kubectl apply printed are the
// ones predicted: a warn finding for each, with its rule ID and naming its
// path; the messages are compared too, and reported when they differ.
func wantPredicted(t *testing.T, p prediction, applyStderr string) {
	t.Helper()
	var predicted []string
	denied := false
	for _, f := range p.findings {
		switch f.Action {
		case "warn":
			predicted = append(predicted, f.Message)
		case "deny":
			denied = true
		}
	}
	slices.Sort(predicted)
	got := warnings(applyStderr)
	if denied != (p.code == 1) {
		t.Errorf("diff exited %d with a deny finding: %v", p.code, denied)
	}
	var gotRules, wantRules []string
	for _, w := range got {
		gotRules = append(gotRules, ruleOf(w))
	}
	for _, w := range predicted {
		wantRules = append(wantRules, ruleOf(w))
	}
	slices.Sort(gotRules)
	slices.Sort(wantRules)
	if !slices.Equal(gotRules, wantRules) {
		t.Fatalf("kubectl apply warned %q, kubectl hygiene diff predicted %q", gotRules, wantRules)
	}
	for _, f := range p.findings {
		if f.Action != "warn" {
			continue
		}
		named := slices.ContainsFunc(got, func(w string) bool {
			return ruleOf(w) == f.Rule && strings.Contains(w, f.Path)
		})
		if !named {
			t.Errorf("no warning of kubectl apply is [%s] naming %s: %q", f.Rule, f.Path, got)
		}
	}
	if !slices.Equal(got, predicted) {
		t.Errorf("the messages differ:\nkubectl apply:          %q\nkubectl hygiene diff:   %q", got, predicted)
	}
}

// Seed 003: after kubectl rollout restart, `kubectl hygiene diff -f v2`
// against the cluster predicts the orphaned restartedAt warning that the
// apply of v2 then prints; before the first apply it predicts a creation
// and no warning.
func TestDiffPredictsTheApplyWarningsSeed003(t *testing.T) {
	bin := framework.HygienePlugin(t)
	f := framework.New(t)
	k := f.Kubectl

	first := predict(t, bin, k, seeds+"seed003-v1.yaml")
	wantPredicted(t, first, k.Run(t, "apply", "-f", seeds+"seed003-v1.yaml").MustSucceed(t).Stderr)
	k.Run(t, "rollout", "restart", "deployment/nginx-deployment").MustSucceed(t)

	p := predict(t, bin, k, seeds+"seed003-v2.yaml")
	if !slices.ContainsFunc(p.findings, func(f struct{ Rule, Action, Path, Message string }) bool {
		return f.Rule == "orphaned-field" && f.Path == "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"
	}) {
		t.Errorf("diff of v2 predicts %+v, want the orphaned restartedAt", p.findings)
	}
	wantPredicted(t, p, k.Run(t, "apply", "-f", seeds+"seed003-v2.yaml").MustSucceed(t).Stderr)
}

// Seed 002: after a kubectl set image (by a member of the break-glass
// group, so admission lets it through), `kubectl hygiene diff -f v1`
// predicts that the apply reverts it, and the apply warns exactly so.
func TestDiffPredictsTheApplyWarningsSeed002(t *testing.T) {
	bin := framework.HygienePlugin(t)
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: breakGlassGroup})
	f.KubectlAs(t, "oncall-bob", breakGlassGroup).Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustSucceed(t)

	p := predict(t, bin, k, "testdata/deployment-v1.yaml")
	if !slices.ContainsFunc(p.findings, func(f struct{ Rule, Action, Path, Message string }) bool {
		return f.Path == "spec.template.spec.containers[name=nginx].image"
	}) {
		t.Errorf("diff of v1 predicts %+v, want the image's revert", p.findings)
	}
	wantPredicted(t, p, k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t).Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.14.2")
}
