package dashboard_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// query is one PromQL expression of the chart and where it is.
type query struct{ where, expr string }

// TestEveryQueriedMetricIsExported makes every series the dashboard and
// the alerts read exist — a review that passes, one that warns, one that
// is denied, one the server cannot review, a call the API server cannot
// make, a periodic audit with a finding — then scrapes the server and the
// API server and looks up every metric name of every query: the server's
// apply_hygiene_* on the server, the API server's apiserver_* on the API
// server. Histograms are looked up by the _bucket series the queries read.
func TestEveryQueriedMetricIsExported(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	framework.WantLines(t, k.Run(t, "rollout", "restart", "deployment/web").MustSucceed(t).Stderr)
	warned := k.Run(t, "apply", "-f", "testdata/deployment-v2.yaml").MustSucceed(t)
	ts := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	framework.WantMatch(t, warned.Stderr,
		regexp.QuoteMeta("Warning: [orphaned-field] Deployment "+f.Namespace+"/web: "+
			"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] (\"")+ts+regexp.QuoteMeta("\", set by kubectl-rollout at ")+ts+
			regexp.QuoteMeta(") is in neither your manifest nor last-applied, so kubectl apply will never remove it. "+
				"Removing it changes the pod template, so it rolls the pods (a new rollout starts). Remove it with: "+
				"kubectl patch deployments.apps/web -n "+f.Namespace+" --type=json -p '")+".*'")
	denied := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustFail(t)
	framework.WantLines(t, denied.Stderr, "error: failed to patch image update to pod template: "+framework.DeniedPrefix+
		"[imperative-edit] Deployment "+f.Namespace+"/web: this write by apply-hygiene-admin (field manager kubectl-set) changes fields that last-applied owns: "+
		`spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.16.1", now "nginx:1.99"); `+
		"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, "+
		"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover deployments.apps/web -n "+f.Namespace+" 'spec.template.spec.containers[name=nginx].image'")
	// Never applied: the audit reports it in apply_hygiene_audit_findings.
	k.Run(t, "create", "deployment", "unapplied", "--image=nginx:1.27").MustSucceed(t)
	postMalformedReview(t)

	finding := fmt.Sprintf(`apply_hygiene_audit_findings{namespace=%q,rule="missing-last-applied"} 1`, f.Namespace)
	var server string
	framework.Eventually(t, 60*time.Second, finding, func(ctx context.Context) (bool, error) {
		server = framework.PollWebhookMetrics(ctx, t)
		return strings.Contains(server, finding), nil
	})
	failOpen(t, k)
	apiserver := f.APIServerMetrics(t)

	exported := map[string]map[string]bool{"server": sampleNames(t, server), "API server": sampleNames(t, apiserver)}
	checked := 0
	for _, q := range append(dashboardQueries(t), alertQueries(t)...) {
		names := metricNames(q.expr)
		if len(names) == 0 {
			t.Errorf("%s: found no metric name in %q", q.where, q.expr)
		}
		for _, name := range names {
			source := "server"
			if strings.HasPrefix(name, "apiserver_") {
				source = "API server"
			}
			checked++
			if !exported[source][name] {
				t.Errorf("%s reads %s, which the %s does not export (query %q)", q.where, name, source, q.expr)
			}
		}
	}
	t.Logf("checked %d metric names of the dashboard's and the alerts' queries", checked)
	// The alerts and the dashboard select the API server's series by the
	// chart's webhook names.
	wantSeries(t, apiserver,
		[]string{"apiserver_admission_webhook_admission_duration_seconds_bucket", `name="mutate.apply-hygiene.io"`},
		[]string{"apiserver_admission_webhook_admission_duration_seconds_bucket", `name="validate.apply-hygiene.io"`},
		[]string{"apiserver_admission_webhook_rejection_count", `name="validate.apply-hygiene.io"`, `error_type="no_error"`},
		[]string{"apiserver_admission_webhook_fail_open_count", `name="validate.apply-hygiene.io"`},
	)
}

// postMalformedReview sends the server an AdmissionReview without a
// request, which it answers with HTTP 400 and counts in
// apply_hygiene_review_errors_total{reason="bad_request"}.
func postMalformedReview(t *testing.T) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(framework.ControlPlane(t).CAPEM())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	url := "https://127.0.0.1:" + strconv.Itoa(framework.Webhook(t).Port) + "/validate"
	resp, err := client.Post(url, "application/json", strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`))
	if err != nil {
		t.Fatalf("posting a malformed review: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a malformed review: HTTP %d, want 400", resp.StatusCode)
	}
}

// failOpen kills the server and makes a write that the validating webhook
// reviews: the API server cannot call it and, with the chart's default
// failurePolicy Ignore, lets the write through and counts it in
// apiserver_admission_webhook_fail_open_count. The server is started again.
func failOpen(t *testing.T, k framework.Kubectl) {
	t.Helper()
	replica := framework.Webhook(t).Replicas()[0]
	if err := replica.Kill(); err != nil {
		t.Fatalf("killing the server: %v", err)
	}
	defer func() {
		if err := replica.Start(context.WithoutCancel(t.Context())); err != nil {
			t.Errorf("starting the server again: %v", err)
		}
	}()
	k.Run(t, "label", "deployment/web", "example.com/unreviewed=true").MustSucceed(t)
}

// sampleNames are the names of the samples of a /metrics page.
func sampleNames(t *testing.T, page string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for series := range framework.ParseSamples(t, page) {
		name, _, _ := strings.Cut(series, "{")
		names[name] = true
	}
	return names
}

// wantSeries checks that the page has, for each want (a metric name, then
// labels), a sample of the metric with those labels among its own: the
// label values the queries select on.
func wantSeries(t *testing.T, page string, want ...[]string) {
	t.Helper()
	for _, w := range want {
		metric, labels := w[0], w[1:]
		found := false
		for _, line := range strings.Split(page, "\n") {
			if !strings.HasPrefix(line, metric+"{") {
				continue
			}
			found = true
			for _, l := range labels {
				found = found && (strings.Contains(line, "{"+l+",") || strings.Contains(line, ","+l+",") || strings.Contains(line, ","+l+"}"))
			}
			if found {
				break
			}
		}
		if !found {
			t.Errorf("no series %s with %s on the API server's /metrics", metric, strings.Join(labels, ", "))
		}
	}
}

// dashboardQueries are the expressions of every panel of the dashboard.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatalf("locating the repository: %v", err)
	}
	file, err := os.ReadFile(filepath.Join(root, "charts", "apply-hygiene", "files", "grafana-dashboard.json"))
	if err != nil {
		t.Fatalf("reading the dashboard: %v", err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(file, &d); err != nil {
		t.Fatalf("decoding the dashboard: %v", err)
	}
	var qs []query
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			qs = append(qs, query{where: "dashboard panel " + strconv.Quote(p.Title), expr: target.Expr})
		}
	}
	if len(qs) == 0 {
		t.Fatal("the dashboard has no query")
	}
	return qs
}

// alertQueries are the expressions of every alert of the PrometheusRule,
// rendered with the audit's and the reports' alerts.
func alertQueries(t *testing.T) []query {
	t.Helper()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatalf("locating the repository: %v", err)
	}
	helm := filepath.Join(controlplane.RequireTools(t, "helm"), "helm")
	cmd := exec.CommandContext(t.Context(), helm, "template", "ah", filepath.Join(root, "charts", "apply-hygiene"),
		"--set", "metrics.prometheusRule.enabled=true,audit.enabled=true,audit.reports.format=openreports", "--show-only", "templates/prometheusrule.yaml")
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	var rule unstructured.Unstructured
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096).Decode(&rule.Object); err != nil {
		t.Fatalf("decoding the PrometheusRule: %v", err)
	}
	groups, _, err := unstructured.NestedSlice(rule.Object, "spec", "groups")
	if err != nil || len(groups) == 0 {
		t.Fatalf("the PrometheusRule has no groups (%v)", err)
	}
	var qs []query
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			alert, _, _ := unstructured.NestedString(r.(map[string]any), "alert")
			expr, _, _ := unstructured.NestedString(r.(map[string]any), "expr")
			qs = append(qs, query{where: "alert " + alert, expr: expr})
		}
	}
	return qs
}
