package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
)

// A stored last-applied that is unusable is warned about on every write
// that leaves it so, but never on a save-config write, which replaces it:
// kubectl apply set-last-applied, which the warning itself prescribes,
// edit-last-applied and replace --save-config. (An edit-last-applied that
// changes last-applied alone under kubectl-client-side-apply is an apply
// of a manifest the object already matches, which kubectl computed with
// the unusable one: warned.) Each case is a captured review
// (testdata/reviews) whose oldObject's last-applied is set to stored, and
// its object's too when the command leaves last-applied as it was (kept),
// as the API server would send the same command on that object.
func TestInvalidStoredLastAppliedOverHTTP(t *testing.T) {
	const (
		notJSON   = `{"apiVersion":"apps/v1","kind":`
		otherName = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"other"}}`
	)
	type answer struct {
		Status   int
		Allowed  bool
		Warnings []string // rule of each warning
	}
	warned := answer{Status: http.StatusOK, Allowed: true, Warnings: []string{"invalid-last-applied"}}
	allowed := answer{Status: http.StatusOK, Allowed: true}
	tests := map[string]struct {
		review, stored string
		kept           bool
		want           answer
	}{
		"set-last-applied over a last-applied that is no JSON":        {review: "deployment-set-last-applied", stored: notJSON, want: allowed},
		"set-last-applied over a JSON array":                          {review: "deployment-set-last-applied", stored: "[]", want: allowed},
		"set-last-applied over the manifest of another object":        {review: "deployment-set-last-applied", stored: otherName, want: allowed},
		"edit-last-applied over a JSON array":                         {review: "deployment-edit-last-applied", stored: "[]", want: allowed},
		"replace --save-config over a JSON number":                    {review: "deployment-replace-save-config", stored: "42", want: allowed},
		"set-last-applied over null, kubectl's no manifest":           {review: "deployment-set-last-applied", stored: "null", want: allowed},
		"a label leaves the unusable last-applied: warned":            {review: "deployment-label", stored: notJSON, kept: true, want: warned},
		"an annotation leaves a JSON string: warned":                  {review: "deployment-annotate", stored: `"x"`, kept: true, want: warned},
		"an apply computed with another object's manifest: warned":    {review: "deployment-apply", stored: otherName, want: warned},
		"a rollout restart leaves the manifest of another object too": {review: "deployment-rollout-restart", stored: otherName, kept: true, want: warned},
	}
	engine := newEngine(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			body := withStoredLastApplied(t, tc.review, tc.stored, tc.kept)
			r := NewReviewer(engine, loadCluster(t, filepath.Join("testdata", "reviews", tc.review+".cluster.json")))
			req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			r.ValidatingEndpoint().ServeHTTP(rec, req)
			var got admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Response == nil {
				t.Fatalf("HTTP %d, answer %q is no AdmissionReview with a response: %v", rec.Code, rec.Body, err)
			}
			if diff := cmp.Diff(tc.want, answer{Status: rec.Code, Allowed: got.Response.Allowed, Warnings: rulesOf(got.Response.Warnings)}); diff != "" {
				t.Errorf("validating answer mismatch (-want +got):\n%s\nresult: %v", diff, got.Response.Result)
			}
		})
	}
}

// withStoredLastApplied returns testdata/reviews/<review>.json with the
// last-applied of its oldObject set to stored, and of its object too when
// kept.
func withStoredLastApplied(t *testing.T, review, stored string, kept bool) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "reviews", review+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	objects := []string{"oldObject"}
	if kept {
		objects = append(objects, "object")
	}
	for _, o := range objects {
		meta := r["request"].(map[string]any)[o].(map[string]any)["metadata"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
			meta["annotations"] = annotations
		}
		annotations[lastAppliedAnnotation] = stored
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
