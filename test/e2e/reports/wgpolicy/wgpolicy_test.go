package wgpolicy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

var policyReports = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "policyreports"}

// result is what the test compares of a report result.
type result struct {
	Policy, Rule, Result, Severity, Message, Resource string
	Properties                                        map[string]string
}

func TestPolicyReport(t *testing.T) {
	f := framework.New(t)
	gauge := `apply_hygiene_reports_crd_missing{format="wgpolicy"} 1`
	framework.Eventually(t, 2*time.Minute, "/metrics line "+gauge, func(ctx context.Context) (bool, error) {
		body := framework.PollWebhookMetrics(ctx, t)
		return strings.Contains("\n"+body, "\n"+gauge+"\n"), nil
	})
	admin := f.Kubectl
	admin.Namespace = ""
	admin.Run(t, "apply", "-f", "testdata/crds.yaml").MustSucceed(t)
	admin.Run(t, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/policyreports.wgpolicyk8s.io", "crd/clusterpolicyreports.wgpolicyk8s.io").MustSucceed(t)

	// A Deployment without last-applied (warn) and an image edited by a
	// service account (imperative-edit, a deny for the audit).
	f.Kubectl.Run(t, "create", "deployment", "made", "--image=nginx:1.27", "--replicas=0").MustSucceed(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	f.KubectlAsServiceAccount(t, "ci-bot").Run(t, "set", "image", "deployment/web", "nginx=nginx:1.28").MustSucceed(t)
	hygiene := framework.HygieneBinary(t)
	want := audited(t, hygiene, f)
	if got := len(want); got != 2 {
		t.Fatalf("kubectl hygiene audit found %d findings, want 2: %+v", got, want)
	}
	rep := waitReport(t, f, "the PolicyReport with the audit's findings", func(r *v1alpha1.Report) bool { return cmp.Equal(want, resultsOf(r)) })
	if diff := cmp.Diff(want, resultsOf(rep)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(v1alpha1.ReportSummary{Fail: 1, Warn: 1}, rep.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if got := rep.Annotations["apply-hygiene.io/dropped-results"]; got != "0" {
		t.Errorf("dropped-results = %q, want 0", got)
	}

	// Fixed: the imperatively made Deployment deleted, web applied again.
	f.Kubectl.Run(t, "delete", "deployment", "made").MustSucceed(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	rep = waitReport(t, f, "the PolicyReport without results", func(r *v1alpha1.Report) bool { return len(r.Results) == 0 })
	if diff := cmp.Diff(v1alpha1.ReportSummary{Pass: 1}, rep.Summary); diff != "" {
		t.Errorf("summary once fixed (-want +got):\n%s", diff)
	}
}

// audited runs kubectl hygiene audit -n on the test's namespace and
// returns its findings as the results the report must hold.
func audited(t *testing.T, hygiene string, f *framework.Framework) []result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), hygiene, "audit", "-n", f.Namespace, "-o", "json", "--kubeconfig", f.Kubectl.Kubeconfig)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Exit status 1 means a finding is a deny: the output is what counts.
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("kubectl hygiene audit: %v\n%s", err, stderr.String())
	}
	var out struct {
		Findings []struct {
			Rule, Action, Path, Message, Fix string
			Object                           struct{ APIVersion, Kind, Namespace, Name string }
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("decoding kubectl hygiene audit -o json: %v\n%s", err, stdout.String())
	}
	results := []result{}
	for _, fd := range out.Findings {
		props := map[string]string{"action": fd.Action, "path": fd.Path}
		if fd.Fix != "" {
			props["fix"] = fd.Fix
		}
		results = append(results, result{Policy: fd.Rule, Rule: fd.Rule, Severity: policy.Severity(policy.RuleID(fd.Rule)), Message: fd.Message,
			Result:     map[string]string{"deny": "fail", "warn": "warn", "dryrun": "skip", "repair": "warn", "prune": "warn"}[fd.Action],
			Resource:   fmt.Sprintf("%s %s %s/%s", fd.Object.APIVersion, fd.Object.Kind, fd.Object.Namespace, fd.Object.Name),
			Properties: props})
	}
	return results
}

func resultsOf(r *v1alpha1.Report) []result {
	out := []result{}
	for _, res := range r.Results {
		var refs []string
		for _, o := range res.Subjects {
			refs = append(refs, fmt.Sprintf("%s %s %s/%s", o.APIVersion, o.Kind, o.Namespace, o.Name))
		}
		out = append(out, result{Policy: res.Policy, Rule: res.Rule, Result: string(res.Result), Severity: string(res.Severity),
			Message: res.Description, Properties: res.Properties, Resource: strings.Join(refs, ", ")})
	}
	return out
}

// waitReport polls the namespace's PolicyReport apply-hygiene (read into
// the OpenReports type: the results and summary have the same JSON) until
// done holds.
func waitReport(t *testing.T, f *framework.Framework, what string, done func(*v1alpha1.Report) bool) *v1alpha1.Report {
	t.Helper()
	cfg, err := framework.ControlPlane(t).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rep *v1alpha1.Report
	framework.Eventually(t, 2*time.Minute, what, func(ctx context.Context) (bool, error) {
		u, err := client.Resource(policyReports).Namespace(f.Namespace).Get(ctx, "apply-hygiene", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		var r v1alpha1.Report
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r); err != nil {
			return false, err
		}
		rep = &r
		return done(rep), nil
	})
	return rep
}
