package reports

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

var scanned = time.Date(2026, 11, 23, 8, 0, 0, 500, time.UTC)

func deployment(ns, name string) merge.ObjectRef {
	return merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name}
}

// sample is a scan of three Deployments in shop (web with two findings,
// api with one), one in idle without findings and a ClusterRole.
func sample() *audit.Report {
	role := merge.ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "reader"}
	return &audit.Report{
		Findings: []audit.Finding{
			{Rule: policy.RuleMissingLastApplied, Action: policy.ActionWarn, Path: "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]",
				Message: "[missing-last-applied] ClusterRole reader: … Record your manifest first with: kubectl apply set-last-applied -f <manifest> --create-annotation", Command: "kubectl apply set-last-applied -f <manifest> --create-annotation",
				Object: role, UID: "uid-reader"},
			{Rule: policy.RuleImperativeEdit, Action: policy.ActionDeny, Path: "spec.replicas",
				Message: "[imperative-edit] Deployment shop/api: … first with: kubectl hygiene handover deployments.apps/api -n shop spec.replicas", Command: "kubectl hygiene handover deployments.apps/api -n shop spec.replicas",
				Object: deployment("shop", "api"), UID: "uid-api"},
			{Rule: policy.RuleImperativeEdit, Action: policy.ActionDryRun, Path: "spec.template.spec.containers[name=web].image",
				Message: "[imperative-edit] Deployment shop/web: … first with: kubectl hygiene handover deployments.apps/web -n shop 'spec.template.spec.containers[name=web].image'", Command: "kubectl hygiene handover deployments.apps/web -n shop 'spec.template.spec.containers[name=web].image'",
				Object: deployment("shop", "web"), UID: "uid-web"},
			{Rule: policy.RuleOrphanedField, Action: policy.ActionWarn, Path: "metadata.labels.debug",
				Message: "[orphaned-field] Deployment shop/web: metadata.labels.debug (\"true\", set by kubectl-label) is not in last-applied, so kubectl apply will never remove it unless your manifest sets it. Remove it with: kubectl edit deployments.apps/web -n shop", Command: "kubectl edit deployments.apps/web -n shop",
				Object: deployment("shop", "web"), UID: "uid-web"},
		},
		Objects:    5,
		Namespaces: map[string]int{"": 1, "shop": 3, "idle": 1},
	}
}

func TestBuild(t *testing.T) {
	ts := metav1.Timestamp{Seconds: scanned.Unix(), Nanos: 500}
	res := func(f audit.Finding, result v1alpha1.Result, severity string, props map[string]string) v1alpha1.ReportResult {
		return v1alpha1.ReportResult{
			Source: "apply-hygiene", Policy: string(f.Rule), Rule: string(f.Rule), Severity: v1alpha1.ResultSeverity(severity),
			Timestamp: ts, Result: result, Description: f.Message, Properties: props,
			Subjects: []corev1.ObjectReference{{APIVersion: f.Object.APIVersion, Kind: f.Object.Kind, Namespace: f.Object.Namespace,
				Name: f.Object.Name, UID: f.UID}},
		}
	}
	f := sample().Findings
	got := Build(sample(), scanned, []string{"gone", "shop"}, Limits{})
	want := []Report{{
		Namespace: "",
		Results: []v1alpha1.ReportResult{res(f[0], "warn", "low", map[string]string{"action": "warn", "path": f[0].Path,
			"fix": "kubectl apply set-last-applied -f <manifest> --create-annotation"})},
		Summary: v1alpha1.ReportSummary{Warn: 1},
	}, {
		// A namespace whose report exists but whose findings are gone gets
		// an empty report.
		Namespace: "gone", Results: []v1alpha1.ReportResult{},
	}, {
		Namespace: "shop",
		Results: []v1alpha1.ReportResult{
			res(f[1], "fail", "medium", map[string]string{"action": "deny", "path": "spec.replicas", "fix": "kubectl hygiene handover deployments.apps/api -n shop spec.replicas"}),
			res(f[2], "skip", "medium", map[string]string{"action": "dryrun", "path": f[2].Path, "fix": "kubectl hygiene handover deployments.apps/web -n shop 'spec.template.spec.containers[name=web].image'"}),
			res(f[3], "warn", "low", map[string]string{"action": "warn", "path": "metadata.labels.debug", "fix": "kubectl edit deployments.apps/web -n shop"}),
		},
		// web and api have findings; the third Deployment passes.
		Summary: v1alpha1.ReportSummary{Pass: 1, Fail: 1, Warn: 1, Skip: 1},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Build (-want +got):\n%s", diff)
	}
}

func TestResultOf(t *testing.T) {
	got := map[policy.Action]v1alpha1.Result{}
	for _, a := range []policy.Action{policy.ActionDeny, policy.ActionWarn, policy.ActionDryRun, policy.ActionRepair, policy.ActionPrune} {
		got[a] = ResultOf(a)
	}
	want := map[policy.Action]v1alpha1.Result{"deny": "fail", "warn": "warn", "dryrun": "skip", "repair": "warn", "prune": "warn"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ResultOf (-want +got):\n%s", diff)
	}
}

// many returns a report of n findings on n objects of namespace big, each
// message of about size bytes.
func many(n, size int) *audit.Report {
	r := &audit.Report{Namespaces: map[string]int{"big": n}}
	for i := range n {
		r.Findings = append(r.Findings, audit.Finding{Rule: policy.RuleOrphanedField, Action: policy.ActionWarn, Path: "metadata.labels.x",
			Message: "[orphaned-field] " + strings.Repeat("m", size), Object: deployment("big", fmt.Sprintf("d%05d", i))})
	}
	return r
}

func TestBuildBoundsTheResults(t *testing.T) {
	tests := map[string]struct {
		report      *audit.Report
		limits      Limits
		wantKept    int
		wantDropped int
	}{
		"within both limits everything is kept": {report: many(10, 100), limits: Limits{}, wantKept: 10},
		"the default keeps 500 results":         {report: many(600, 100), limits: Limits{}, wantKept: 500, wantDropped: 100},
		"maxResults from the chart":             {report: many(30, 100), limits: Limits{MaxResults: 25}, wantKept: 25, wantDropped: 5},
		// Each result takes about 10.4 kB of JSON: 1 MiB holds 101 of them.
		"1 MiB of results at most": {report: many(300, 10000), limits: Limits{MaxResults: 1000}, wantKept: 101, wantDropped: 199},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Build(tc.report, scanned, nil, tc.limits)
			if len(got) != 1 {
				t.Fatalf("Build made %d reports, want 1", len(got))
			}
			r := got[0]
			if len(r.Results) != tc.wantKept || r.Dropped != tc.wantDropped {
				t.Errorf("kept %d and dropped %d results, want %d and %d", len(r.Results), r.Dropped, tc.wantKept, tc.wantDropped)
			}
			// The summary counts every finding, the dropped ones too.
			if want := (v1alpha1.ReportSummary{Warn: len(tc.report.Findings)}); r.Summary != want {
				t.Errorf("summary = %+v, want %+v", r.Summary, want)
			}
			// The kept ones are the first, in the audit's order.
			if len(r.Results) > 0 && r.Results[len(r.Results)-1].Subjects[0].Name != tc.report.Findings[len(r.Results)-1].Object.Name {
				t.Errorf("last kept result is on %s, want %s", r.Results[len(r.Results)-1].Subjects[0].Name, tc.report.Findings[len(r.Results)-1].Object.Name)
			}
			obj, err := FormatOpenReports.Object(r, tc.limits)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := obj.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) > DefaultMaxBytes+4096 {
				t.Errorf("the report takes %d bytes, more than 1 MiB and its metadata", len(raw))
			}
		})
	}
}
