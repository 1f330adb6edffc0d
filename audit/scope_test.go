package audit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// A scan attaches a fix only where the webhook would review the object and
// the decision's action writes: never in kube-system, an excluded
// namespace, one labelled ignore or one whose labels cannot be read, never
// for dryrun, and for warn only with the rule's auditFix knob or for a
// person's command. Each finding without its fix says why.
func TestScanFixScope(t *testing.T) {
	const warnReason = "its action is warn, which only reports (the rule's auditFix lets the audit fix it)"
	tests := map[string]struct {
		// namespace is the Deployment's namespace and its labels; nil
		// labels: no Namespace object, so they cannot be read.
		namespace string
		labels    map[string]string
		engine    func(*testing.T) *policy.Engine
		scope     FixScope
		// noFix is the finding's NoFix, "" when it has its fix.
		noFix string
	}{
		"a reviewed namespace, the rule opted in: fixed": {
			namespace: "shop", labels: map[string]string{}, engine: testFixEngine,
		},
		"a reviewed namespace, warn not opted in: only reported": {
			namespace: "shop", labels: map[string]string{}, engine: testEngine,
			noFix: warnReason,
		},
		"a person's command fixes warn without the knob": {
			namespace: "shop", labels: map[string]string{}, engine: testEngine, scope: FixScope{Person: true},
		},
		"a namespace labelled ignore": {
			namespace: "shop", labels: map[string]string{IgnoreLabel: "true"}, engine: testFixEngine,
			noFix: "namespace shop is labelled apply-hygiene.io/ignore",
		},
		"a namespace labelled ignore, a person's command with --fix-ignored-namespaces": {
			namespace: "shop", labels: map[string]string{IgnoreLabel: "true"}, engine: testEngine, scope: FixScope{Person: true, IgnoredNamespaces: true},
		},
		"a namespace labelled enforcement=dryrun": {
			namespace: "shop", labels: map[string]string{"apply-hygiene.io/enforcement": "dryrun"}, engine: testFixEngine,
			noFix: "its action is dryrun, which only records",
		},
		"a namespace labelled enforcement=dryrun, a person's command": {
			namespace: "shop", labels: map[string]string{"apply-hygiene.io/enforcement": "dryrun"}, engine: testFixEngine, scope: FixScope{Person: true, IgnoredNamespaces: true},
			noFix: "its action is dryrun, which only records",
		},
		"kube-system": {
			namespace: "kube-system", labels: map[string]string{}, engine: testFixEngine,
			noFix: "namespace kube-system is excluded from apply-hygiene",
		},
		"a namespace the chart excludes": {
			namespace: "shop", labels: map[string]string{}, engine: testFixEngine, scope: FixScope{ExcludedNamespaces: []string{"apply-hygiene", "shop"}},
			noFix: "namespace shop is excluded from apply-hygiene",
		},
		"an object the webhooks' objectSelector does not match": {
			namespace: "shop", labels: map[string]string{}, engine: testFixEngine,
			scope: FixScope{ObjectSelector: labels.SelectorFromSet(labels.Set{"reviewed": "yes"})},
			noFix: "its labels do not match the webhooks' objectSelector",
		},
		"an object the webhooks' objectSelector matches": {
			namespace: "shop", labels: map[string]string{}, engine: testFixEngine,
			scope: FixScope{ObjectSelector: labels.Everything()},
		},
		"a namespace whose labels cannot be read": {
			namespace: "shop", engine: testFixEngine,
			noFix: "the labels of namespace shop could not be read",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := readObjects(t, "deployments/restarted.yaml")
			objs[0].SetNamespace(tc.namespace)
			if tc.labels != nil {
				objs = append(objs, namespaceObject(tc.namespace, tc.labels))
			}
			report, err := NewScanner(newFakeClient(objs...), testAnalyzer(t), tc.engine(t), WithFixScope(tc.scope)).Scan(t.Context(), Target{})
			if err != nil {
				t.Fatal(err)
			}
			type view struct {
				Rule   policy.RuleID
				Fix    bool
				NoFix  string
				Action policy.Action
			}
			var got []view
			for _, f := range report.Findings {
				got = append(got, view{Rule: f.Rule, Fix: f.Fix != nil, NoFix: f.NoFix, Action: f.Action})
			}
			action := policy.ActionWarn
			if tc.labels["apply-hygiene.io/enforcement"] == "dryrun" {
				action = policy.ActionDryRun
			}
			want := []view{{Rule: policy.RuleOrphanedField, Fix: tc.noFix == "", NoFix: tc.noFix, Action: action}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			fixes, notFixed, _ := PlanFixes(report.Findings)
			if tc.noFix != "" && (len(fixes) != 0 || len(notFixed) != 1) {
				t.Errorf("PlanFixes = %d fixes, %d not fixed; want the finding not fixed", len(fixes), len(notFixed))
			}
		})
	}
}
