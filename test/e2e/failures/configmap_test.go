package failures_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// noLabelPolicy denies kubectl label in namespace ns.
func noLabelPolicy(ns string) string {
	return `package applyhygiene.rules.e2e_no_label

import data.applyhygiene.lib

decisions contains lib.decision_or("no-label", "deny", message, []) if {
	input.request.fieldManager == "kubectl-label"
	input.namespace.name == "` + ns + `"
}

message := sprintf("[no-label] %s: no kubectl label here", [lib.describe])
`
}

// syntaxError is the no-label policy cut off: it does not compile.
const syntaxError = "package applyhygiene.rules.e2e_no_label\n\nmessage := {\n"

// failingPolicy compiles but fails when it evaluates a kubectl label in
// namespace ns: to_number of the object's name, with the engine's strict
// built-in errors.
func failingPolicy(ns string) string {
	return `package applyhygiene.rules.e2e_no_label

import data.applyhygiene.lib

decisions contains lib.decision_or("no-label", "deny", "[no-label] no kubectl label here", []) if {
	input.request.fieldManager == "kubectl-label"
	input.namespace.name == "` + ns + `"
	to_number(input.request.object.name) > 0
}
`
}

// A policy ConfigMap broken in either way a user can break it. One that
// does not compile changes nothing a user sees, under Ignore and Fail
// alike: the error is on the ConfigMap, the last good policies keep
// deciding. One that compiles but fails at evaluation fails the reviews
// it reaches, and the failure policy decides them: Ignore allows with a
// warning, Fail rejects.
func TestPolicyConfigMapBroken(t *testing.T) {
	tests := map[string]struct {
		policy       string
		wantExitCode int
		wantStdout   []string
		// wantStderr is the line of a label that the failing policy's
		// error decides (a regular expression).
		wantStderr string
		wantLabel  string
	}{
		"failurePolicy Ignore": {
			policy:     "Ignore",
			wantStdout: []string{"deployment.apps/web labeled"},
			wantStderr: regexp.QuoteMeta("Warning: apply-hygiene could not review this request and allowed it (failure policy Ignore): ") + evalError.String(),
			wantLabel:  "a",
		},
		"failurePolicy Fail": {
			policy:       "Fail",
			wantExitCode: 1,
			wantStderr: regexp.QuoteMeta(`Error from server: admission webhook "validate.apply-hygiene.io" denied the request: `+
				"apply-hygiene could not review this request: ") + evalError.String(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			framework.WithFailurePolicy(t, tc.policy)
			f := newWeb(t)
			cm := policyConfigMap(t, f, noLabelPolicy(f.Namespace))
			denied := "Error from server (Forbidden): " + framework.DeniedPrefix + "[no-label] Deployment " + f.Namespace + "/web: no kubectl label here"
			waitLabelDryRun(t, f, regexp.QuoteMeta(denied))

			setPolicy(t, f, cm, syntaxError)
			wantPolicyError(t, f, cm, "configmap/"+cm+"/policy.rego:4: rego_parse_error: ")
			res := f.Kubectl.Run(t, "label", "deployment/web", "team=a").MustFail(t)
			framework.WantLines(t, res.Stdout)
			framework.WantLines(t, res.Stderr, denied)

			setPolicy(t, f, cm, failingPolicy(f.Namespace))
			waitLabelDryRun(t, f, tc.wantStderr)
			wantPolicyError(t, f, cm, "")
			res = f.Kubectl.Run(t, "label", "deployment/web", "team=a")
			if res.ExitCode != tc.wantExitCode {
				t.Errorf("kubectl label exited %d, want %d", res.ExitCode, tc.wantExitCode)
			}
			framework.WantLines(t, res.Stdout, tc.wantStdout...)
			framework.WantMatch(t, res.Stderr, tc.wantStderr)
			if got := f.Kubectl.JSONPath(t, "deployment/web", "{.metadata.labels.team}"); got != tc.wantLabel {
				t.Errorf("deployment/web label team = %q, want %q", got, tc.wantLabel)
			}
		})
	}
}

// evalError is the engine's error for failingPolicy; the number of the
// policy set counts the loads of the server process.
var evalError = regexp.MustCompile(regexp.QuoteMeta("evaluating policies: evaluating policy set ") + `\d+` +
	regexp.QuoteMeta(`: configmap/e2e-failures/policy.rego:8: eval_builtin_error: to_number: strconv.ParseFloat: parsing "web": invalid syntax`))

// policyConfigMap creates a policy ConfigMap for the test with module
// policy.rego and returns its name; it is deleted when the test ends.
func policyConfigMap(t *testing.T, f *framework.Framework, module string) string {
	t.Helper()
	cms := f.Client.CoreV1().ConfigMaps(devenv.Namespace)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-failures", Labels: map[string]string{policy.ConfigMapLabel: policy.ConfigMapLabelValue}},
		Data:       map[string]string{"policy.rego": module},
	}
	if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the policy ConfigMap: %v", err)
	}
	t.Cleanup(func() {
		if err := cms.Delete(context.Background(), cm.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the policy ConfigMap: %v", err)
		}
	})
	return cm.Name
}

// setPolicy replaces the module of the policy ConfigMap name.
func setPolicy(t *testing.T, f *framework.Framework, name, module string) {
	t.Helper()
	cms := f.Client.CoreV1().ConfigMaps(devenv.Namespace)
	cur, err := cms.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Data["policy.rego"] = module
	if _, err := cms.Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the policy ConfigMap: %v", err)
	}
}

// wantPolicyError waits until the ConfigMap's policy-error annotation
// starts with prefix, or is gone for "".
func wantPolicyError(t *testing.T, f *framework.Framework, name, prefix string) {
	t.Helper()
	cms := f.Client.CoreV1().ConfigMaps(devenv.Namespace)
	var got string
	framework.Eventually(t, 30*time.Second, fmt.Sprintf("the annotation %s to start with %q", policy.ConfigMapErrorAnnotation, prefix), func(ctx context.Context) (bool, error) {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		var ok bool
		got, ok = cm.Annotations[policy.ConfigMapErrorAnnotation]
		if prefix == "" {
			return !ok, nil
		}
		return strings.HasPrefix(got, prefix), nil
	})
}

// waitLabelDryRun waits until kubectl label --dry-run=server of
// deployment/web prints a line matching pattern on stderr: the server has
// loaded the policy ConfigMap as it is now.
func waitLabelDryRun(t *testing.T, f *framework.Framework, pattern string) {
	t.Helper()
	line := regexp.MustCompile("^" + pattern + "$")
	framework.Eventually(t, 30*time.Second, "kubectl label --dry-run=server to print "+pattern, func(context.Context) (bool, error) {
		res := f.Kubectl.Run(t, "label", "deployment/web", "team=a", "--dry-run=server")
		return slices.ContainsFunc(res.StderrLines(), line.MatchString), nil
	})
}
