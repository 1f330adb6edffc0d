package audit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8stesting "k8s.io/client-go/testing"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// testMapper maps the apps/v1 workloads.
func testMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"Deployment", "StatefulSet", "DaemonSet"} {
		m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: kind}, meta.RESTScopeNamespace)
	}
	return m
}

// The Runner with a Fixer removes a restarted Deployment's restartedAt
// once, logs it in one line, counts it, records a Normal event AuditFixed
// and leaves the fixed finding out of the gauges and Warning events; the
// next scan finds nothing to fix.
func TestRunnerFixesWithTheFixer(t *testing.T) {
	client := newFakeClient(append(readObjects(t, "deployments/restarted.yaml"), namespaceObject("shop", nil))...)
	reg := prometheus.NewRegistry()
	rec := &recorder{}
	r, err := NewRunner(NewScanner(client, testAnalyzer(t), testFixEngine(t)), RunnerOptions{
		Registry: reg, Recorder: rec, Fixer: NewFixer(client, testMapper(), FixFieldManager),
	})
	if err != nil {
		t.Fatal(err)
	}
	var fixedLines []string
	logger := funcr.NewJSON(func(obj string) {
		if strings.Contains(obj, `"msg":"audit fixed an object"`) {
			fixedLines = append(fixedLines, obj)
		}
	}, funcr.Options{})
	ctx := logr.NewContext(t.Context(), logger)
	report, err := r.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantLine := `{"logger":"audit","level":0,"msg":"audit fixed an object","kind":"Deployment","namespace":"shop","name":"web",` +
		`"fix":"removed spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] (rolls the pods)"}`
	if diff := cmp.Diff([]string{wantLine}, fixedLines); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Finding{}, report.Findings); diff != "" {
		t.Errorf("findings left after the fix (-want +got):\n%s", diff)
	}
	wantEvent := "Normal AuditFixed Audit Deployment shop/web(uid-web): apply-hygiene's audit fixed it (field manager apply-hygiene-audit): " +
		"removed spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] (rolls the pods)"
	if diff := cmp.Diff([]string{wantEvent}, rec.take()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{}, gauges(t, reg)); diff != "" {
		t.Errorf("gauges (-want +got):\n%s", diff)
	}
	live, err := client.Resource(deployments).Namespace("shop").Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, found, _ := unstructured.NestedString(live.Object, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt"); found {
		t.Errorf("restartedAt = %q after the fix, want it removed", got)
	}
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(fixedLines) != 1 {
		t.Errorf("the second scan fixed again: %q", fixedLines)
	}
	want := `
# HELP apply_hygiene_audit_fixes_total Findings the periodic audit fixed (audit.fix), by rule and result: applied, conflict (the object changed or went since the scan; nothing was written) or error.
# TYPE apply_hygiene_audit_fixes_total counter
apply_hygiene_audit_fixes_total{result="applied",rule="orphaned-field"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "apply_hygiene_audit_fixes_total"); err != nil {
		t.Error(err)
	}
}

// A fix that the API server refuses is counted by its result and leaves
// the finding, with its Warning event, in the report; nothing is
// recorded as fixed.
func TestRunnerCountsFixesThatFail(t *testing.T) {
	tests := map[string]struct {
		err        error
		wantResult string
	}{
		"a failed test operation is a conflict": {
			err:        apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", nil),
			wantResult: "conflict",
		},
		"a forbidden patch is an error": {
			err:        apierrors.NewForbidden(deployments.GroupResource(), "web", errors.New("no patch")),
			wantResult: "error",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client := newFakeClient(append(readObjects(t, "deployments/restarted.yaml"), namespaceObject("shop", nil))...)
			client.PrependReactor("patch", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
			reg := prometheus.NewRegistry()
			rec := &recorder{}
			r, err := NewRunner(NewScanner(client, testAnalyzer(t), testFixEngine(t)), RunnerOptions{
				Registry: reg, Recorder: rec, Fixer: NewFixer(client, testMapper(), FixFieldManager),
			})
			if err != nil {
				t.Fatal(err)
			}
			report, err := r.RunOnce(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := len(report.Findings); got != 1 || report.Findings[0].Rule != policy.RuleOrphanedField {
				t.Errorf("findings = %+v, want the orphan kept", report.Findings)
			}
			if diff := cmp.Diff([]string{"Warning OrphanedField Audit Deployment shop/web(uid-web)"}, summary(rec.take())); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			want := fmt.Sprintf("\n# HELP apply_hygiene_audit_fixes_total Findings the periodic audit fixed (audit.fix), by rule and result: applied, conflict (the object changed or went since the scan; nothing was written) or error.\n"+
				"# TYPE apply_hygiene_audit_fixes_total counter\napply_hygiene_audit_fixes_total{result=%q,rule=\"orphaned-field\"} 1\n", tc.wantResult)
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "apply_hygiene_audit_fixes_total"); err != nil {
				t.Error(err)
			}
		})
	}
}

// Without a Fixer the Runner registers no fixes counter.
func TestRunnerWithoutFixerHasNoFixesCounter(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewRunner(NewScanner(newFakeClient(), testAnalyzer(t), testEngine(t)), RunnerOptions{Registry: reg}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apply_hygiene_audit_fixes_total", Help: "x"}, []string{"rule", "result"})); err != nil {
		t.Errorf("registering apply_hygiene_audit_fixes_total: %v; want it free without a Fixer", err)
	}
}

// A failed fix of a Secret logs the API server's reason only: a
// validation error may quote the value.
func TestRedactedKeepsSecretValuesOutOfTheLog(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, "db", field.ErrorList{field.Invalid(field.NewPath("data", "password"), "hunter2", "bad")})
	tests := map[string]struct {
		ref  merge.ObjectRef
		want string
	}{
		"a Secret: the reason only": {
			ref:  merge.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "shop", Name: "db"},
			want: "patching the Secret: the API server answered Invalid (its message is not logged)",
		},
		"a ConfigMap: the whole error": {
			ref:  merge.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "db"},
			want: invalid.Error(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, redacted(tc.ref, invalid).Error()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
