package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// apiServerTraceparent is a W3C traceparent as kube-apiserver sends it
// with its own tracing on: trace 4bf9…4736, span 00f0…02b7, sampled.
const apiServerTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// A review served with a tracer gives one root span named for the
// endpoint, a child of the API server's traceparent when it sends one,
// with a child span per step, the write's identity and decisions as
// attributes, and nothing of the objects' bodies.
func TestTracedReviewSpans(t *testing.T) {
	tests := map[string]struct {
		review      string
		path        string
		traceparent string
		children    []string
		decisions   map[attribute.Key]attribute.Value
	}{
		"kubectl set image, validated, continues the API server's trace": {
			review: "deployment-set-image", path: "/validate", traceparent: apiServerTraceparent,
			children: []string{"decode", "analysis", "policy"},
			decisions: map[attribute.Key]attribute.Value{
				"apply_hygiene.classification": attribute.StringValue("imperative"),
				"apply_hygiene.rules":          attribute.StringSliceValue([]string{"imperative-edit"}),
				"apply_hygiene.actions":        attribute.StringSliceValue([]string{"deny"}),
			},
		},
		"a rollout undo, mutated, starts a trace and is repaired": {
			review: "deployment-rollout-undo", path: "/mutate",
			children: []string{"decode", "analysis", "policy", "repair"},
			decisions: map[attribute.Key]attribute.Value{
				"apply_hygiene.classification": attribute.StringValue("rollout-undo"),
				"apply_hygiene.rules":          attribute.StringSliceValue([]string{"stale-last-applied"}),
				"apply_hygiene.actions":        attribute.StringSliceValue([]string{"repair"}),
			},
		},
	}
	engine := newEngine(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			r := NewReviewer(engine, loadCluster(t, filepath.Join("testdata", "reviews", tc.review+".cluster.json")), WithTracerProvider(tp))
			handler := r.ValidatingEndpoint()
			if tc.path == "/mutate" {
				handler = r.MutatingEndpoint()
			}
			body, err := os.ReadFile(filepath.Join("testdata", "reviews", tc.review+".json"))
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, tc.path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if tc.traceparent != "" {
				req.Header.Set("Traceparent", tc.traceparent)
			}
			rec := httptest.NewRecorder()
			r.Traced(tc.path, handler).ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
			}

			ended := spans.Ended()
			root := ended[len(ended)-1]
			if got, want := root.Name(), "apply-hygiene "+tc.path; got != want {
				t.Fatalf("last span ended = %q, want the root %q", got, want)
			}
			if tc.traceparent != "" {
				if got, want := root.Parent().TraceID().String()+"/"+root.Parent().SpanID().String(), "4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7"; got != want {
					t.Errorf("root's parent = %s, want the traceparent's %s", got, want)
				}
				if !root.Parent().IsRemote() {
					t.Errorf("root's parent is not remote")
				}
			} else if root.Parent().IsValid() {
				t.Errorf("root's parent = %v, want none", root.Parent())
			}
			var children []string
			for _, s := range ended[:len(ended)-1] {
				if s.Parent().SpanID() != root.SpanContext().SpanID() || s.SpanContext().TraceID() != root.SpanContext().TraceID() {
					t.Errorf("span %q is not a child of the root", s.Name())
				}
				children = append(children, s.Name())
			}
			if diff := cmp.Diff(tc.children, children); diff != "" {
				t.Errorf("child spans mismatch (-want +got):\n%s", diff)
			}

			want := map[attribute.Key]attribute.Value{
				"http.route":                attribute.StringValue(tc.path),
				"http.response.status_code": attribute.IntValue(http.StatusOK),
				"k8s.admission.operation":   attribute.StringValue("UPDATE"),
				"k8s.admission.uid":         attribute.StringValue(reviewUID(t, body)),
				"k8s.admission.dry_run":     attribute.BoolValue(false),
				"k8s.object.group":          attribute.StringValue("apps"),
				"k8s.object.version":        attribute.StringValue("v1"),
				"k8s.object.kind":           attribute.StringValue("Deployment"),
				"k8s.object.resource":       attribute.StringValue("deployments"),
				"k8s.object.subresource":    attribute.StringValue(""),
				"k8s.namespace.name":        attribute.StringValue(tc.review),
				"k8s.object.name":           attribute.StringValue("web"),
			}
			for k, v := range tc.decisions {
				want[k] = v
			}
			got := map[attribute.Key]attribute.Value{}
			for _, kv := range root.Attributes() {
				got[kv.Key] = kv.Value
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b attribute.Value) bool { return a.String() == b.String() })); diff != "" {
				t.Errorf("root attributes mismatch (-want +got):\n%s", diff)
			}
			identity := map[string]bool{tc.review: true, "web": true, "apps": true, "v1": true, "Deployment": true, "apps/v1": true}
			for _, s := range ended {
				for _, kv := range s.Attributes() {
					for _, value := range bodyStrings(t, body) {
						if !identity[value] && strings.Contains(kv.Value.String(), value) {
							t.Errorf("span %q attribute %s = %q holds %q from the objects", s.Name(), kv.Key, kv.Value.String(), value)
						}
					}
				}
			}
		})
	}
}

// Without a tracer, Traced returns the handler itself: the review path
// is the same as without tracing.
func TestTracedIsNextWithoutTracer(t *testing.T) {
	r := NewReviewer(newEngine(t), &fakeCluster{})
	next := http.NotFoundHandler()
	if got := r.Traced("/validate", next); reflect.ValueOf(got).Pointer() != reflect.ValueOf(next).Pointer() {
		t.Errorf("Traced without a tracer wraps the handler")
	}
}

func reviewUID(t *testing.T, body []byte) string {
	t.Helper()
	var review struct {
		Request struct{ UID string } `json:"request"`
	}
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	return review.Request.UID
}

// bodyStrings are the string values of a review's object and oldObject of
// four characters or more.
func bodyStrings(t *testing.T, body []byte) []string {
	t.Helper()
	var review struct {
		Request struct {
			Object, OldObject any
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case string:
			if len(v) >= 4 {
				out = append(out, v)
			}
		}
	}
	walk(review.Request.Object)
	walk(review.Request.OldObject)
	return out
}

// A review that fails is answered with HTTP 200 and an AdmissionResponse
// whose status is 500 (failure policy Fail) or an allowance with a warning
// (Ignore): its root span is marked failed all the same (found by review:
// it was OK), with a message that names the failure and never the error's
// text, which may quote a field's value.
func TestFailedReviewSpanIsAnError(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "reviews", "deployment-edit.json"))
	if err != nil {
		t.Fatal(err)
	}
	failing := policy.EvaluatorFunc(func(context.Context, *policy.Input) ([]policy.Decision, error) {
		return nil, errors.New(`evaluating policies: spec.template.spec.containers[name=web].env[name=TOKEN].value "s3cr3t" is not a string`)
	})
	for name, failOpen := range map[string]bool{"failure policy Fail": false, "failure policy Ignore": true} {
		t.Run(name, func(t *testing.T) {
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			r := NewReviewer(failing, loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json")),
				WithTracerProvider(tp), WithFailOpen(failOpen))
			req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			r.Traced("/validate", r.ValidatingEndpoint()).ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
			}

			ended := spans.Ended()
			root := ended[len(ended)-1]
			want := sdktrace.Status{Code: codes.Error, Description: "apply-hygiene could not review this request (internal error; the error's text is not recorded: it may quote a field's value)"}
			if diff := cmp.Diff(want, root.Status()); diff != "" {
				t.Errorf("root span status (-want +got):\n%s", diff)
			}
			for _, s := range ended {
				for _, kv := range s.Attributes() {
					if strings.Contains(kv.Value.String(), "s3cr3t") {
						t.Errorf("span %q attribute %s holds the error's value", s.Name(), kv.Key)
					}
				}
				if strings.Contains(s.Status().Description, "s3cr3t") {
					t.Errorf("span %q status holds the error's value", s.Name())
				}
			}
		})
	}
}
