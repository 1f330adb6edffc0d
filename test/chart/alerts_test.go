package chart_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// ruleGroup is one group of a PrometheusRule's spec, as promtool reads it.
type ruleGroup struct {
	Name  string `json:"name"`
	Rules []struct {
		Alert       string            `json:"alert"`
		Expr        string            `json:"expr"`
		For         string            `json:"for"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"rules"`
}

// ruleGroups renders the chart's PrometheusRule with the default
// thresholds and more values (--set), and returns its spec: the rule file
// promtool reads.
func ruleGroups(t *testing.T, set string) []byte {
	t.Helper()
	objs := decode(t, render(t, "default", "--set", "metrics.prometheusRule.enabled=true"+set, "--show-only", "templates/prometheusrule.yaml"))
	if len(objs) != 1 || objs[0].GetKind() != "PrometheusRule" {
		t.Fatalf("rendered %d objects, want one PrometheusRule", len(objs))
	}
	spec, err := yaml.Marshal(objs[0].Object["spec"])
	if err != nil {
		t.Fatalf("encoding the rule groups: %v", err)
	}
	return spec
}

// allAlerts are the values (after metrics.prometheusRule.enabled) that
// render every alert.
const allAlerts = ",audit.enabled=true,audit.reports.format=openreports"

// promtool runs the pinned promtool in dir and returns its output lines.
func promtool(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), tool(t, "promtool"), args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// TestPrometheusRuleUnitTests checks the rendered alerts with promtool and
// runs its unit tests (testdata/promtool/alerts_test.yaml): each alert
// fires on the series the server and the API server record when it
// should, with its exact labels and annotations, and not before its for:
// nor on look-alike series.
func TestPrometheusRuleUnitTests(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), ruleGroups(t, allAlerts), 0o644); err != nil {
		t.Fatalf("writing the rules: %v", err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "promtool", "alerts_test.yaml"))
	if err != nil {
		t.Fatalf("reading the promtool tests: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o644); err != nil {
		t.Fatalf("writing the promtool tests: %v", err)
	}

	got := promtool(t, dir, "check", "rules", "rules.yaml")
	if diff := cmp.Diff([]string{"Checking rules.yaml", "  SUCCESS: 10 rules found"}, got); diff != "" {
		t.Errorf("promtool check rules (-want +got):\n%s", diff)
	}
	got = promtool(t, dir, "test", "rules", "alerts_test.yaml")
	if diff := cmp.Diff([]string{"Processing test file: alerts_test.yaml", "  SUCCESS"}, got); diff != "" {
		t.Errorf("promtool test rules (-want +got):\n%s", diff)
	}
}

// TestPrometheusRuleAlerts checks what an on-call engineer reads: which
// alerts exist (the audit's only with the audit), and that every alert
// waits (for:), has a severity, a summary and a description, and a
// runbook_url whose anchor is a heading of docs/operations.md.
func TestPrometheusRuleAlerts(t *testing.T) {
	anchors := operationsAnchors(t)
	admission := []string{
		"ApplyHygieneReviewErrors", "ApplyHygieneWebhookRejectingWrites", "ApplyHygieneWebhookFailingOpen",
		"ApplyHygieneSlowReviews", "ApplyHygieneSlowWebhookCalls", "ApplyHygienePolicyLoadFailed", "ApplyHygieneDenialsSpiking",
	}
	audit := slices.Concat(admission, []string{"ApplyHygieneAuditTooOld", "ApplyHygieneAuditNeverSucceeded"})
	tests := map[string]struct {
		set  string
		want []string
	}{
		"without the audit, no audit alert":           {want: admission},
		"reports without the audit, no audit alert":   {set: ",audit.reports.format=openreports", want: admission},
		"with the audit, also the audit's":            {set: ",audit.enabled=true", want: audit},
		"with the audit's reports, also the reports'": {set: allAlerts, want: slices.Concat(audit, []string{"ApplyHygieneReportCRDsMissing"})},
		"the reports' values missing, as after an upgrade with --reuse-values": {
			set: ",audit.enabled=true,audit.reports=null", want: audit,
		},
	}
	const runbook = "https://github.com/apply-hygiene/apply-hygiene/blob/main/docs/operations.md#"
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var spec struct {
				Groups []ruleGroup `json:"groups"`
			}
			if err := yaml.Unmarshal(ruleGroups(t, tc.set), &spec); err != nil {
				t.Fatalf("decoding the rule groups: %v", err)
			}
			var got []string
			for _, g := range spec.Groups {
				for _, r := range g.Rules {
					got = append(got, r.Alert)
					severity := r.Labels["severity"]
					if r.For == "" || (severity != "warning" && severity != "critical") ||
						r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
						t.Errorf("%s: for %q, severity %q, summary %q, description %q: want all set",
							r.Alert, r.For, severity, r.Annotations["summary"], r.Annotations["description"])
					}
					anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], runbook)
					if !ok || !anchors[anchor] {
						t.Errorf("%s: runbook_url %q is not a heading of docs/operations.md", r.Alert, r.Annotations["runbook_url"])
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("alerts (-want +got):\n%s", diff)
			}
		})
	}
}

// operationsAnchors are the anchors GitHub gives the headings of
// docs/operations.md: lower case, spaces to hyphens, other punctuation
// dropped.
func operationsAnchors(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "operations.md"))
	if err != nil {
		t.Fatalf("reading docs/operations.md: %v", err)
	}
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if heading, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			anchors[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(heading), ""), " ", "-")] = true
		}
	}
	return anchors
}

// TestPrometheusRuleOfEveryScenarioChecks runs promtool check rules on the
// PrometheusRule of every scenario that renders one, with its own
// thresholds and labels.
func TestPrometheusRuleOfEveryScenarioChecks(t *testing.T) {
	checked := 0
	for _, scenario := range scenarios {
		for _, o := range decode(t, render(t, scenario)) {
			if o.GetKind() != "PrometheusRule" {
				continue
			}
			checked++
			t.Run(scenario, func(t *testing.T) {
				spec, err := yaml.Marshal(o.Object["spec"])
				if err != nil {
					t.Fatalf("encoding the rule groups: %v", err)
				}
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), spec, 0o644); err != nil {
					t.Fatalf("writing the rules: %v", err)
				}
				got := promtool(t, dir, "check", "rules", "rules.yaml")
				if len(got) != 2 || got[0] != "Checking rules.yaml" || !strings.HasPrefix(got[1], "  SUCCESS: ") {
					t.Errorf("promtool check rules:\n%s", strings.Join(got, "\n"))
				}
			})
		}
	}
	if checked == 0 {
		t.Error("no scenario renders a PrometheusRule")
	}
}
