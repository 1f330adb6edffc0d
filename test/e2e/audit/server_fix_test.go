package audit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// A Deployment restarted and applied again keeps restartedAt, which no
// apply removes: the server's next audit removes it with its guarded
// patch, records a Normal event AuditFixed with what it did and counts
// the fix; the finding is gone from the gauge, and the next apply of the
// same manifest changes nothing.
func testAuditRemovesRestartedAt(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	restartedAndApplied(t, f)

	framework.Eventually(t, 60*time.Second, "restartedAt removed by the audit", func(context.Context) (bool, error) {
		return k.JSONPath(t, "deployment/web", restartedAtExpr) == "", nil
	})
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.template.metadata}"), `{"labels":{"app":"web"}}`)
	wantAuditFixedEvent(t, f)
	// One fix applied and none failed. A scan that ran while the
	// Deployment controller was still writing the restarted rollout finds
	// the object changed when it writes, and counts a conflict (its guard
	// at work); the next scan applies the fix.
	var fixes []string
	for _, line := range framework.MetricLines(framework.PollWebhookMetrics(t.Context(), t), "apply_hygiene_audit_fixes_total{") {
		if !strings.HasPrefix(line, `apply_hygiene_audit_fixes_total{result="conflict",`) {
			fixes = append(fixes, line)
		}
	}
	if diff := cmp.Diff([]string{`apply_hygiene_audit_fixes_total{result="applied",rule="orphaned-field"} 1`}, fixes); diff != "" {
		t.Errorf("apply_hygiene_audit_fixes_total but conflicts (-want +got):\n%s", diff)
	}
	gauge := fmt.Sprintf(`apply_hygiene_audit_findings{namespace=%q,rule="orphaned-field"}`, f.Namespace)
	framework.Eventually(t, 30*time.Second, "no orphaned-field gauge for the namespace", func(ctx context.Context) (bool, error) {
		return len(framework.MetricLines(framework.PollWebhookMetrics(ctx, t), gauge)) == 0, nil
	})
	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t).Stdout, "deployment.apps/web unchanged")
}

// The chart's patch rule is needed and sufficient: with the server's
// --audit-fix but the chart's audit.fix=false, which grants no patch, the
// API server forbids the fix, the server counts it as an error and the
// object keeps restartedAt with its finding and gets no AuditFixed event;
// with audit.fix=true again the next audit fixes it.
func testAuditFixNeedsTheChartsPatchRule(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	restore := framework.Reconfigure(t, "audit.fix=false")
	restartedAt := restartedAndApplied(t, f)

	errorLine := `apply_hygiene_audit_fixes_total{result="error",rule="orphaned-field"} `
	framework.Eventually(t, 60*time.Second, "a fix counted as an error", func(ctx context.Context) (bool, error) {
		return len(framework.MetricLines(framework.PollWebhookMetrics(ctx, t), errorLine)) == 1, nil
	})
	if got := framework.MetricLines(framework.PollWebhookMetrics(t.Context(), t), `apply_hygiene_audit_fixes_total{result="applied"`); len(got) != 0 {
		t.Errorf("fixes applied without the patch rule: %q", got)
	}
	if got, err := events(t.Context(), t, f, "AuditFixed"); err != nil || len(got) != 0 {
		t.Errorf("AuditFixed events without the patch rule: %q (%v)", got, err)
	}
	if got := k.JSONPath(t, "deployment/web", restartedAtExpr); got != restartedAt {
		t.Errorf("restartedAt = %q without the patch rule, want %q kept", got, restartedAt)
	}
	gauge := fmt.Sprintf(`apply_hygiene_audit_findings{namespace=%q,rule="orphaned-field"} 1`, f.Namespace)
	if diff := cmp.Diff([]string{gauge}, framework.MetricLines(framework.PollWebhookMetrics(t.Context(), t), gauge)); diff != "" {
		t.Errorf("the finding is not in the gauge (-want +got):\n%s", diff)
	}

	restore()
	framework.Eventually(t, 60*time.Second, "restartedAt removed with the patch rule", func(context.Context) (bool, error) {
		return k.JSONPath(t, "deployment/web", restartedAtExpr) == "", nil
	})
	// The server that had no patch may fix it as soon as the upgraded
	// chart grants it, before its restart: its event says so, whichever
	// process wrote it.
	wantAuditFixedEvent(t, f)
}

// wantAuditFixedEvent waits for the AuditFixed event on deployment/web and
// requires it to be the one Normal event with fixedNote.
func wantAuditFixedEvent(t *testing.T, f *framework.Framework) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, "the AuditFixed event on deployment/web", func(ctx context.Context) (bool, error) {
		got, err := events(ctx, t, f, "AuditFixed")
		return len(got) > 0, err
	})
	got, err := events(t.Context(), t, f, "AuditFixed")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Normal AuditFixed Audit: " + fixedNote}, got); diff != "" {
		t.Errorf("AuditFixed events on deployment/web (-want +got):\n%s", diff)
	}
}
