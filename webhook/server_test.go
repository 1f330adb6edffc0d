package webhook

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

// Malformed reviews get HTTP 400 with a message that says what is wrong,
// and the server goes on serving.
func TestHTTPHandlerRejectsMalformedReviews(t *testing.T) {
	valid, err := os.ReadFile(filepath.Join("testdata", "reviews", "deployment-edit.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		body        string
		wantStatus  int
		wantMessage string
	}{
		"a body that is not JSON": {body: "this is not json", wantStatus: http.StatusBadRequest,
			wantMessage: "the request body is not a JSON object: an AdmissionReview is sent as JSON"},
		"a review without a request": {body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`,
			wantStatus: http.StatusBadRequest, wantMessage: "bad admission request: the AdmissionReview has no request (uid, operation and kind are required)"},
		"an object that is not of the declared kind": {body: strings.Replace(string(valid), `"kind": "Deployment",`, `"kind": "ConfigMap",`, 1),
			wantStatus: http.StatusBadRequest, wantMessage: "bad admission request: object is a ConfigMap (apps/v1), but the request declares Deployment (apps/v1)"},
		"an object that is not an object": {body: withObject(t, valid, `["not", "an", "object"]`),
			wantStatus: http.StatusBadRequest, wantMessage: "bad admission request: object is a JSON array, not an object"},
		"a valid review after all that": {body: string(valid), wantStatus: http.StatusOK, wantMessage: "[imperative-edit] "},
	}
	srv := httptest.NewServer(NewReviewer(newEngine(t), loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json"))).ValidatingEndpoint())
	defer srv.Close()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := http.Post(srv.URL, "application/json", bytes.NewBufferString(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			got := readAnswer(t, resp)
			if got.Status != tc.wantStatus {
				t.Errorf("status = %d, want %d; answer %+v", got.Status, tc.wantStatus, got)
			}
			if !strings.HasPrefix(got.Message, tc.wantMessage) {
				t.Errorf("message = %q, want it to start with %q", got.Message, tc.wantMessage)
			}
		})
	}
}

// withObject returns review with its object replaced by raw.
func withObject(t *testing.T, review []byte, raw string) string {
	t.Helper()
	var r admissionv1.AdmissionReview
	if err := json.Unmarshal(review, &r); err != nil {
		t.Fatal(err)
	}
	r.Request.Object.Raw = []byte(raw)
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// answer is what a user sees of an admission answer.
type answer struct {
	Status   int
	Allowed  bool
	Message  string
	Warnings []string
}

func readAnswer(t *testing.T, resp *http.Response) answer {
	t.Helper()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &review); err != nil || review.Response == nil {
		t.Fatalf("answer %s is no AdmissionReview with a response: %v", raw, err)
	}
	got := answer{Status: resp.StatusCode, Allowed: review.Response.Allowed, Warnings: review.Response.Warnings}
	if review.Response.Result != nil {
		got.Message = review.Response.Result.Message
	}
	return got
}
