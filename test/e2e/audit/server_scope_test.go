package audit_test

import (
	"cmp"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The periodic audit fixes only where the webhook would review and the
// action writes. An env var added with kubectl set env is an orphan that
// orphaned-field reports; with the rule's auditFix on (fixValues) the
// audit removes it in a namespace apply-hygiene reviews, and leaves it,
// still reported, in a namespace labelled apply-hygiene.io/ignore, in one
// labelled apply-hygiene.io/enforcement=dryrun (which only records) and in
// kube-system. The finding in the gauge shows a scan that saw it and did
// not fix it.
func testAuditFixStaysInScope(t *testing.T) {
	tests := map[string]struct {
		// namespace is where Deployment web goes: "" for the test's own.
		namespace string
		// labels label the test's namespace.
		labels []string
		// removed says the audit removes the env var.
		removed bool
	}{
		"a namespace apply-hygiene reviews: removed": {removed: true},
		"a namespace labelled apply-hygiene.io/ignore: kept": {
			labels: []string{"apply-hygiene.io/ignore=true"},
		},
		"a namespace labelled apply-hygiene.io/enforcement=dryrun: kept": {
			labels: []string{"apply-hygiene.io/enforcement=dryrun"},
		},
		"kube-system: kept": {namespace: "kube-system"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			if tc.namespace != "" {
				k.Namespace = tc.namespace
				t.Cleanup(func() { k.Run(t, "delete", "deployment", "web", "--ignore-not-found", "--wait=false") })
			}
			if len(tc.labels) > 0 {
				k.Run(t, append([]string{"label", "namespace", f.Namespace, "--overwrite"}, tc.labels...)...).MustSucceed(t)
			}
			ns := cmp.Or(tc.namespace, f.Namespace)
			k.Run(t, "apply", "-f", "testdata/web.yaml").MustSucceed(t)
			k.Run(t, "set", "env", "deployment/web", "SET_BY_HAND=yes").MustSucceed(t)
			if tc.removed {
				// A scan may run between kubectl set env and the next
				// read (CI saw it): the env var may be gone already.
				framework.Eventually(t, 60*time.Second, "the env var removed by the audit", func(context.Context) (bool, error) {
					return k.JSONPath(t, "deployment/web", envExpr) == "", nil
				})
				return
			}
			framework.WantLines(t, k.JSONPath(t, "deployment/web", envExpr), `[{"name":"SET_BY_HAND","value":"yes"}]`)
			gauge := fmt.Sprintf(`apply_hygiene_audit_findings{namespace=%q,rule="orphaned-field"} 1`, ns)
			framework.Eventually(t, 60*time.Second, "a scan that reports the orphan and leaves it", func(ctx context.Context) (bool, error) {
				return len(framework.MetricLines(framework.PollWebhookMetrics(ctx, t), gauge)) == 1, nil
			})
			framework.WantLines(t, k.JSONPath(t, "deployment/web", envExpr), `[{"name":"SET_BY_HAND","value":"yes"}]`)
		})
	}
}
