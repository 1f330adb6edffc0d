package badinput_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/test/reviewtest"
	"github.com/apply-hygiene/apply-hygiene/webhook"
)

// caseTimeout bounds each answer, even for 10,000 env entries: the API
// server's default timeoutSeconds is 5. Under the race detector the bound
// grows by raceSlowdown.
const caseTimeout = raceSlowdown * 5 * time.Second

// outcome is what one handler answered, reduced to what a user sees.
type outcome struct {
	// Status is the HTTP status.
	Status int
	// Allowed is the review's answer.
	Allowed bool
	// Message starts the denial or error message ("" when allowed).
	Message string
	// Warnings are the rule IDs of the warnings; a warning without one is
	// kept in full.
	Warnings []string
	// Patched says the answer carries a JSON patch (mutating only).
	Patched bool
}

var (
	allowed = outcome{Status: http.StatusOK, Allowed: true}
	// failOpen is the warning of a review that could not be completed
	// (failure policy Ignore); it names the error.
	failOpen = "apply-hygiene could not review this request and allowed it (failure policy Ignore): "
)

func badRequest(message string) outcome {
	return outcome{Status: http.StatusBadRequest, Message: message}
}

// denied is a denial whose message starts with message.
func denied(message string) outcome {
	return outcome{Status: http.StatusOK, Message: message}
}

func allowedWith(warnings ...string) outcome {
	return outcome{Status: http.StatusOK, Allowed: true, Warnings: warnings}
}

func TestBadInputGetsAClearAnswer(t *testing.T) {
	const notJSON = "the request body is not a JSON object: an AdmissionReview is sent as JSON"
	tests := map[string]struct {
		validating, mutating outcome
	}{
		"not-json":       {validating: badRequest(notJSON), mutating: badRequest(notJSON)},
		"no-request":     {validating: badRequest(noRequest), mutating: badRequest(noRequest)},
		"object-is-null": {validating: badRequest("bad admission request: object is missing"), mutating: badRequest("bad admission request: object is missing")},
		"old-object-missing": {validating: badRequest("bad admission request: oldObject is missing"),
			mutating: badRequest("bad admission request: oldObject is missing")},
		"object-of-another-kind": {validating: badRequest(otherKind), mutating: badRequest(otherKind)},
		"kind-without-group":     {validating: badRequest(noGroup), mutating: badRequest(noGroup)},
		// A Scale without spec.replicas is a scale to zero (omitempty):
		// last-applied owns replicas (3), so a person's scale is denied.
		"scale-to-zero": {validating: denied(scaleToZeroDenied), mutating: allowed},
		// controller-runtime decodes any AdmissionReview apiVersion into
		// v1 and echoes it in the answer; the API server only sends the
		// versions of admissionReviewVersions (v1).
		"wrong-apiversion":         {validating: allowed, mutating: allowed},
		"last-applied-not-json":    {validating: allowedWith("invalid-last-applied"), mutating: allowed},
		"last-applied-other-kind":  {validating: allowedWith("invalid-last-applied"), mutating: allowed},
		"last-applied-other-name":  {validating: allowedWith("invalid-last-applied"), mutating: allowed},
		"last-applied-null-fields": {validating: allowed, mutating: allowed},
		"last-applied-1mib":        {validating: allowedWith("last-applied-too-large"), mutating: allowed},
		// 10,000 entries make last-applied ~400 KB, above 80% of 256 KiB.
		"env-10000-entries": {validating: allowedWith("last-applied-too-large"), mutating: allowed},
		// Was O(n²) in the list length: 30-40 s per handler for 10,000
		// (docs/reliability.md, finding 7); ~0.8 s since merge indexes
		// keyed lists.
		"env-10000-entries-replaced": {validating: allowedWith("last-applied-too-large"), mutating: allowed},
		"duplicate-merge-keys":       {validating: allowed, mutating: allowed},
		"custom-resource":            {validating: allowed, mutating: allowed},
		"status-only-update":         {validating: allowed, mutating: allowed},
		"delete":                     {validating: allowed, mutating: allowed},
		"connect":                    {validating: allowed, mutating: allowed},
		"object-and-old-swapped":     {validating: allowed, mutating: allowed},
		"containers-not-list":        {validating: allowed, mutating: allowed},
		// The API server writes managedFields: a malformed one is no
		// request of a server (docs/reliability.md, finding 4).
		"managed-fields-not-list": {validating: badRequest(managedFieldsNotList), mutating: badRequest(managedFieldsNotList)},
	}
	for name := range generators {
		if _, ok := tests[name]; !ok {
			t.Errorf("case %s has no expected outcome", name)
		}
	}
	handlers := newHandlers(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			body := corpus(t, name)
			compare(t, "validating", tc.validating, send(t, handlers["validating"], body))
			compare(t, "mutating", tc.mutating, send(t, handlers["mutating"], body))
		})
	}
}

const (
	noRequest         = "bad admission request: the AdmissionReview has no request (uid, operation and kind are required)"
	otherKind         = "bad admission request: object is a ConfigMap (v1), but the request declares Deployment (apps/v1)"
	noGroup           = "bad admission request: object is a Deployment (apps/v1), but the request declares Deployment ()"
	scaleToZeroDenied = "[imperative-edit] Deployment deployment-apply/web: this write by apply-hygiene-admin changes fields that last-applied owns: spec.replicas (last-applied 3, now 0); "

	managedFieldsNotList = "bad admission request: object: metadata.managedFields is a string, not a list"
)

// handlers are the validating and mutating endpoints on the real policy
// engine, over a cluster that holds Deployment web as stored.
func newHandlers(t *testing.T) map[string]http.Handler {
	t.Helper()
	engine, err := policy.New(t.Context())
	if err != nil {
		t.Fatalf("creating the policy engine: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", baseReview))
	if err != nil {
		t.Fatal(err)
	}
	var base admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &base); err != nil {
		t.Fatal(err)
	}
	stored := &unstructured.Unstructured{}
	if err := stored.UnmarshalJSON(base.Request.OldObject.Raw); err != nil {
		t.Fatal(err)
	}
	c := &cluster{objects: map[string]*unstructured.Unstructured{"deployments/" + stored.GetNamespace() + "/web": stored}}
	r := webhook.NewReviewer(engine, c)
	return map[string]http.Handler{
		"validating": r.ValidatingEndpoint(),
		"mutating":   r.MutatingEndpoint(),
	}
}

// send posts body to h as the API server would and reduces the answer;
// it fails t when there is none within caseTimeout or it is no
// AdmissionReview.
func send(t *testing.T, h http.Handler, body []byte) outcome {
	t.Helper()
	got, err := answer(t.Context(), h, body)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// answer is send for any goroutine: it returns what send fails on.
func answer(ctx context.Context, h http.Handler, body []byte) (outcome, error) {
	rec, err := reviewtest.Post(ctx, h, "/", body, caseTimeout)
	if err != nil {
		return outcome{}, err
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil {
		return outcome{}, fmt.Errorf("HTTP %d, answer %q is no AdmissionReview: %w", rec.Code, rec.Body.String(), err)
	}
	resp := review.Response
	if resp == nil {
		return outcome{}, fmt.Errorf("HTTP %d, answer %q has no response", rec.Code, rec.Body.String())
	}
	got := outcome{Status: rec.Code, Allowed: resp.Allowed, Warnings: rules(resp.Warnings), Patched: len(resp.Patch) > 0}
	if resp.Result != nil {
		got.Message = resp.Result.Message
	}
	return got, nil
}

var rulePrefix = regexp.MustCompile(`^\[([a-z-]+)\] `)

func rules(warnings []string) []string {
	var out []string
	for _, w := range warnings {
		if m := rulePrefix.FindStringSubmatch(w); m != nil {
			out = append(out, m[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

// compare checks got against want; want.Message is a prefix.
func compare(t *testing.T, handler string, want, got outcome) {
	t.Helper()
	if want.Message != "" && strings.HasPrefix(got.Message, want.Message) {
		got.Message = want.Message
	}
	for i, w := range got.Warnings {
		if strings.HasPrefix(w, failOpen) {
			got.Warnings[i] = failOpen
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s answer mismatch (-want +got):\n%s", handler, diff)
	}
}
