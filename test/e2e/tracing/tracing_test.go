package tracing_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The update of a kubectl apply is one trace: the API server's span of the
// request, its calls of both webhooks, and apply-hygiene's review of each,
// whose root span is a child of the API server's webhook call (the
// traceparent it sent) with decode, analysis and policy spans under it,
// attributes naming the object and the decision, and no field value.
func TestApplyUpdateIsOneTraceWithTheAPIServersWebhookCalls(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/web-v1.yaml").MustSucceed(t)
	f.Kubectl.Run(t, "apply", "-f", "testdata/web-v2.yaml").MustSucceed(t)

	var trace []span
	framework.Eventually(t, time.Minute, "apply-hygiene's and the API server's spans of the update", func(context.Context) (bool, error) {
		trace = traceOfUpdate(otlp.Spans(), f.Namespace)
		return hasWebhookCall(trace, "validate.apply-hygiene.io") && hasWebhookCall(trace, "mutate.apply-hygiene.io") &&
			len(named(trace, "apply-hygiene", "decode")) == 2, nil
	})
	byID := map[string]span{}
	for _, s := range trace {
		byID[s.SpanID] = s
	}
	for _, tc := range []struct{ path, webhook, call string }{
		{"/mutate", "mutate.apply-hygiene.io", "Call mutating webhook"},
		{"/validate", "validate.apply-hygiene.io", "Call validating webhook"},
	} {
		roots := named(trace, "apply-hygiene", "apply-hygiene "+tc.path)
		if len(roots) != 1 {
			t.Fatalf("the update's trace has %d apply-hygiene %s spans, want 1:\n%s", len(roots), tc.path, describe(trace))
		}
		root := roots[0]
		if got := ancestry(byID, root); !strings.Contains(got, "apiserver:"+tc.call+"["+tc.webhook+"]") {
			t.Errorf("apply-hygiene %s's ancestors are %s, want the API server's call of %s among them", tc.path, got, tc.webhook)
		}
		if parent, ok := byID[root.ParentID]; !ok || parent.Service != "apiserver" {
			t.Errorf("apply-hygiene %s's parent is %+v, want an API server span", tc.path, parent)
		}
		var children []string
		for _, s := range trace {
			if s.ParentID == root.SpanID {
				children = append(children, s.Service+":"+s.Name)
			}
		}
		want := []string{"apply-hygiene:decode", "apply-hygiene:analysis", "apply-hygiene:policy"}
		if diff := cmp.Diff(want, children); diff != "" {
			t.Errorf("apply-hygiene %s's child spans mismatch (-want +got):\n%s", tc.path, diff)
		}
		for k, v := range map[string]string{
			"k8s.admission.operation":      "UPDATE",
			"k8s.admission.dry_run":        "false",
			"k8s.object.group":             "apps",
			"k8s.object.kind":              "Deployment",
			"k8s.namespace.name":           f.Namespace,
			"k8s.object.name":              "web",
			"apply_hygiene.classification": "client-side-apply",
			"http.response.status_code":    "200",
		} {
			if root.Attributes[k] != v {
				t.Errorf("apply-hygiene %s attribute %s = %q, want %q", tc.path, k, root.Attributes[k], v)
			}
		}
	}
	for _, s := range trace {
		if s.Service != "apply-hygiene" {
			continue
		}
		for k, v := range s.Attributes {
			if strings.Contains(v, "value-never-traced") || strings.Contains(v, "nginx:") {
				t.Errorf("span %s attribute %s = %q holds a field value", s.Name, k, v)
			}
		}
	}
}

// traceOfUpdate returns the spans of the trace that holds apply-hygiene's
// review of an UPDATE in namespace, nil before there is one.
func traceOfUpdate(spans []span, namespace string) []span {
	traceID := ""
	for _, s := range spans {
		if s.Service == "apply-hygiene" && s.Attributes["k8s.namespace.name"] == namespace && s.Attributes["k8s.admission.operation"] == "UPDATE" {
			traceID = s.TraceID
		}
	}
	if traceID == "" {
		return nil
	}
	var out []span
	for _, s := range spans {
		if s.TraceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// hasWebhookCall reports whether trace holds the API server's span of its
// call of webhook.
func hasWebhookCall(trace []span, webhook string) bool {
	for _, s := range trace {
		if s.Service == "apiserver" && s.Attributes["webhook"] == webhook {
			return true
		}
	}
	return false
}

func named(trace []span, service, name string) []span {
	var out []span
	for _, s := range trace {
		if s.Service == service && s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// ancestry lists s's ancestors, nearest first, as service:name[webhook].
func ancestry(byID map[string]span, s span) string {
	var out []string
	for p, ok := byID[s.ParentID]; ok; p, ok = byID[p.ParentID] {
		out = append(out, fmt.Sprintf("%s:%s[%s]", p.Service, p.Name, p.Attributes["webhook"]))
	}
	return strings.Join(out, " < ")
}

func describe(trace []span) string {
	var b strings.Builder
	for _, s := range trace {
		fmt.Fprintf(&b, "%s %s parent=%s %s:%s %v\n", s.TraceID, s.SpanID, s.ParentID, s.Service, s.Name, s.Attributes)
	}
	return b.String()
}
