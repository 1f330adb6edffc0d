package reports_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

const (
	imagePath = "spec.template.spec.containers[name=nginx].image"
	labelPath = "metadata.labels.debug"
	// lastAppliedPath is the path of findings on the annotation itself.
	lastAppliedPath = "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"
	// missingMsg is the server's log message while the CRDs are missing.
	missingMsg = "policy report CRDs missing; the audit publishes no reports until they are installed"
	scanMsg    = "audit scan finished"
	// installedMsg is its log message once they are installed.
	installedMsg = "the policy report CRDs are installed now; publishing the audit's reports"
)

// The steps run in order on one control plane: the CRDs are absent, then
// installed.
func TestPolicyReports(t *testing.T) {
	f := framework.New(t)
	t.Run("without the CRDs the server audits on and says so once", func(t *testing.T) { crdsMissing(t, f) })
	if t.Failed() {
		return
	}
	f.InstallOpenReportsCRDs(t)
	t.Run("once the CRDs are installed the server says so", func(t *testing.T) { crdsInstalled(t) })
	t.Run("drift becomes a Report equal to kubectl hygiene audit", func(t *testing.T) { driftReported(t, f) })
	if t.Failed() {
		return
	}
	t.Run("fixing the drift empties the Report at the next audit", func(t *testing.T) { driftFixed(t, f) })
	t.Run("a cluster-scoped object's finding is in the ClusterReport until it is gone", func(t *testing.T) { clusterReport(t, f) })
}

func crdsMissing(t *testing.T, f *framework.Framework) {
	// Three audits after the first: the error is logged and the event
	// recorded once, not at every run.
	framework.Eventually(t, 2*time.Minute, "four audit scans", func(context.Context) (bool, error) {
		return len(serverLog(t, scanMsg)) >= 4, nil
	})
	lines := serverLog(t, missingMsg)
	if len(lines) != 1 {
		t.Fatalf("%d log lines %q, want 1: %v", len(lines), missingMsg, lines)
	}
	got := map[string]any{"level": lines[0]["level"], "format": lines[0]["format"], "error": lines[0]["error"]}
	want := map[string]any{"level": "error", "format": "openreports",
		"error": "the API server serves no reports and clusterreports in openreports.io/v1alpha1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the log line (-want +got):\n%s", diff)
	}
	gauge := `apply_hygiene_reports_crd_missing{format="openreports"} 1`
	if metrics := framework.PollWebhookMetrics(t.Context(), t); !hasLine(metrics, gauge) {
		t.Errorf("/metrics has no line %q", gauge)
	}
	pod := framework.Webhook(t).Replicas()[0].Name()
	var notes []string
	framework.Eventually(t, 30*time.Second, "a ReportsCRDMissing event on pod "+pod, func(ctx context.Context) (bool, error) {
		events, err := f.Client.EventsV1().Events(devenv.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		notes = nil
		for _, e := range events.Items {
			if e.Reason == "ReportsCRDMissing" {
				notes = append(notes, fmt.Sprintf("%s %s %s/%s %s: %s", e.Type, e.Action, e.Regarding.Kind, e.Regarding.Name, e.ReportingController, e.Note))
			}
		}
		return len(notes) > 0, nil
	})
	wantNotes := []string{corev1.EventTypeWarning + " PublishReports Pod/" + pod + " apply-hygiene-audit: The Report and ClusterReport CRDs " +
		"(openreports.io/v1alpha1, reports format openreports) are not installed: the audit's findings are not published as policy reports until they are."}
	if diff := cmp.Diff(wantNotes, notes); diff != "" {
		t.Errorf("ReportsCRDMissing events (-want +got):\n%s", diff)
	}
}

func crdsInstalled(t *testing.T) {
	gauge := `apply_hygiene_reports_crd_missing{format="openreports"} 0`
	framework.Eventually(t, time.Minute, "/metrics line "+gauge, func(ctx context.Context) (bool, error) {
		return hasLine(framework.PollWebhookMetrics(ctx, t), gauge), nil
	})
	lines := serverLog(t, installedMsg)
	if len(lines) != 1 || lines[0]["level"] != "info" || lines[0]["groupVersion"] != "openreports.io/v1alpha1" {
		t.Errorf("log lines %q: %v, want one at level info for openreports.io/v1alpha1", installedMsg, lines)
	}
	if n := len(serverLog(t, missingMsg)); n != 1 {
		t.Errorf("%d log lines %q, want still 1", n, missingMsg)
	}
}

func driftReported(t *testing.T, f *framework.Framework) {
	f.Kubectl.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/clean.yaml").MustSucceed(t)
	// A service account's imperative edits are warned about, not denied,
	// at admission; the audit, which knows no writer, finds the image
	// edit a deny (imperative-edit's action) and the label an orphan.
	bot := f.KubectlAsServiceAccount(t, "ci-bot")
	planted := time.Now().Add(-time.Second)
	bot.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.28").MustSucceed(t)
	bot.Run(t, "label", "deployment/web", "debug=true").MustSucceed(t)

	findings := f.AuditFindings(t, "-n", f.Namespace)
	var summary []string
	for _, fd := range findings {
		summary = append(summary, fmt.Sprintf("%s %s %s/%s %s", fd.Rule, fd.Action, fd.Object.Kind, fd.Object.Name, fd.Path))
	}
	wantSummary := []string{"imperative-edit deny Deployment/web " + imagePath, "orphaned-field warn Deployment/web " + labelPath}
	if diff := cmp.Diff(wantSummary, summary); diff != "" {
		t.Fatalf("kubectl hygiene audit findings (-want +got):\n%s", diff)
	}
	want := wantResults(findings)
	var rep *v1alpha1.Report
	framework.Eventually(t, 2*time.Minute, "the Report of "+f.Namespace+" with the audit's findings", func(ctx context.Context) (bool, error) {
		r, err := report(ctx, t, f.Namespace)
		if err != nil || r == nil {
			return false, err
		}
		rep = r
		return cmp.Equal(want, resultsOf(r)), nil
	})
	if diff := cmp.Diff(want, resultsOf(rep)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	// web has the findings, clean passes.
	if diff := cmp.Diff(v1alpha1.ReportSummary{Pass: 1, Fail: 1, Warn: 1}, rep.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	wantMeta := map[string]string{"label": "apply-hygiene", "dropped": "0", "source": "apply-hygiene", "maxResults": "500"}
	gotMeta := map[string]string{"label": rep.Labels["app.kubernetes.io/managed-by"], "dropped": rep.Annotations["apply-hygiene.io/dropped-results"],
		"source": rep.Source}
	if rep.Configuration != nil {
		gotMeta["maxResults"] = fmt.Sprint(rep.Configuration.Limits.MaxResults)
	}
	if diff := cmp.Diff(wantMeta, gotMeta); diff != "" {
		t.Errorf("report metadata (-want +got):\n%s", diff)
	}
	for _, r := range rep.Results {
		if at := time.Unix(r.Timestamp.Seconds, int64(r.Timestamp.Nanos)); at.Before(planted) || at.After(time.Now()) {
			t.Errorf("%s: timestamp %s, not the time of an audit since the drift (%s)", r.Rule, at, planted)
		}
	}
}

// result is what the test compares of a report result.
type result struct {
	Policy, Rule, Result, Severity, Message string
	Properties                              map[string]string
	Resource                                string
}

func wantResults(findings []framework.AuditFinding) []result {
	out := []result{}
	for _, fd := range findings {
		res := map[string]string{"deny": "fail", "warn": "warn", "dryrun": "skip", "repair": "warn", "prune": "warn"}[fd.Action]
		props := map[string]string{"action": fd.Action, "path": fd.Path}
		if fd.Fix != "" {
			props["fix"] = fd.Fix
		}
		out = append(out, result{Policy: fd.Rule, Rule: fd.Rule, Result: res, Severity: policy.Severity(policy.RuleID(fd.Rule)),
			Message: fd.Message, Properties: props,
			Resource: fmt.Sprintf("%s %s %s/%s", fd.Object.APIVersion, fd.Object.Kind, fd.Object.Namespace, fd.Object.Name)})
	}
	return out
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

func driftFixed(t *testing.T, f *framework.Framework) {
	rep, err := report(t.Context(), t, f.Namespace)
	if err != nil || rep == nil {
		t.Fatalf("reading the Report: %v, %v", rep, err)
	}
	// Applying the manifest again puts the image back; the orphaned label
	// goes with the fix command of its result, run as it is printed.
	f.Kubectl.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
	var fix string
	for _, r := range rep.Results {
		if r.Rule == "orphaned-field" {
			fix = r.Properties["fix"]
		}
	}
	if !strings.HasPrefix(fix, "kubectl patch deployments.apps/web -n "+f.Namespace+" --type=json -p '") {
		t.Fatalf("the orphan's fix is %q, want its kubectl patch", fix)
	}
	sh := exec.CommandContext(t.Context(), "sh", "-c", framework.KubectlPath()+strings.TrimPrefix(fix, "kubectl"))
	sh.Env = append(os.Environ(), "KUBECONFIG="+f.Kubectl.Kubeconfig)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("running the fix %q: %v\n%s", fix, err, out)
	}
	framework.Eventually(t, 2*time.Minute, "the Report of "+f.Namespace+" without results", func(ctx context.Context) (bool, error) {
		r, err := report(ctx, t, f.Namespace)
		if err != nil || r == nil {
			return false, err
		}
		rep = r
		return len(r.Results) == 0 && r.Summary.Fail == 0 && r.Summary.Warn == 0, nil
	})
	if diff := cmp.Diff(v1alpha1.ReportSummary{Pass: 2}, rep.Summary); diff != "" {
		t.Errorf("summary once fixed (-want +got):\n%s", diff)
	}
}

func clusterReport(t *testing.T, f *framework.Framework) {
	role := "made-imperatively-" + f.Namespace
	admin := f.Kubectl
	admin.Namespace = ""
	admin.Run(t, "create", "clusterrole", role, "--verb=get", "--resource=pods").MustSucceed(t)
	t.Cleanup(func() { admin.Run(t, "delete", "clusterrole", role, "--ignore-not-found") })

	var findings []framework.AuditFinding
	for _, fd := range f.AuditFindings(t, "-A", "--kind", "clusterroles") {
		if fd.Object.Namespace == "" {
			findings = append(findings, fd)
		}
	}
	objects := map[string]bool{}
	var ours []string
	for _, fd := range findings {
		objects[fd.Object.Name] = true
		if fd.Object.Name == role {
			ours = append(ours, fd.Rule+" "+fd.Action+" "+fd.Path)
		}
	}
	if diff := cmp.Diff([]string{"missing-last-applied warn " + lastAppliedPath}, ours); diff != "" {
		t.Fatalf("kubectl hygiene audit findings on clusterrole %s (-want +got):\n%s", role, diff)
	}
	want := wantResults(findings)
	var rep *v1alpha1.Report
	framework.Eventually(t, 2*time.Minute, "the ClusterReport with the audit's cluster-scoped findings", func(ctx context.Context) (bool, error) {
		r, err := report(ctx, t, "")
		if err != nil || r == nil {
			return false, err
		}
		rep = r
		return cmp.Equal(want, resultsOf(r)), nil
	})
	if diff := cmp.Diff(want, resultsOf(rep)); diff != "" {
		t.Errorf("ClusterReport results (-want +got):\n%s", diff)
	}
	roles, err := f.Client.RbacV1().ClusterRoles().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantSummary := v1alpha1.ReportSummary{Pass: len(roles.Items) - len(objects), Warn: len(findings)}
	if diff := cmp.Diff(wantSummary, rep.Summary); diff != "" {
		t.Errorf("ClusterReport summary (-want +got):\n%s", diff)
	}

	// Gone: the ClusterReport keeps no result on it.
	admin.Run(t, "delete", "clusterrole", role).MustSucceed(t)
	framework.Eventually(t, 2*time.Minute, "the ClusterReport without a result on clusterrole "+role, func(ctx context.Context) (bool, error) {
		r, err := report(ctx, t, "")
		if err != nil || r == nil {
			return false, err
		}
		for _, res := range r.Results {
			for _, o := range res.Subjects {
				if o.Name == role {
					return false, nil
				}
			}
		}
		return true, nil
	})
}
