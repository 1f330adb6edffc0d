package webhook

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeOnceKeepsControllerRuntimeHTTPBehaviour holds the answers of
// the single decode byte-identical to controller-runtime's on what it
// answers itself: no body, oversized and unreadable bodies, wrong content
// types, v1beta1 and other review kinds, an apiVersion key that
// encoding/json's case-insensitive match reads after the exact one, an
// escaped kind key, requests given twice, objects that are not objects.
// TestDecodeAnswersMalformedBodies pins the bodies no API server sends
// that the single decoder answers otherwise: not JSON, YAML, null, empty,
// fields of another type, a "Kind" key.
func TestDecodeOnceKeepsControllerRuntimeHTTPBehaviour(t *testing.T) {
	edit := readFile(t, filepath.Join("testdata", "reviews", "deployment-edit.json"))
	undo := readFile(t, filepath.Join("testdata", "reviews", "deployment-rollout-undo.json"))
	replace := func(body []byte, old, new string) []byte {
		t.Helper()
		if !bytes.Contains(body, []byte(old)) {
			t.Fatalf("the review has no %q", old)
		}
		return bytes.Replace(body, []byte(old), []byte(new), 1)
	}
	withRequest := func(body []byte, mod func(*http.Request)) func() *http.Request {
		return func() *http.Request {
			req := postJSON(body)()
			mod(req)
			return req
		}
	}
	padded := append(append([]byte{}, edit...), bytes.Repeat([]byte(" "), maxRequestSize-len(edit))...)
	tests := map[string]func() *http.Request{
		"a captured edit":             postJSON(edit),
		"a captured undo (a patch)":   postJSON(undo),
		"a review with a timeout":     withRequest(edit, func(r *http.Request) { r.URL.RawQuery = "timeout=10s" }),
		"a v1beta1 review":            postJSON(replace(edit, `"apiVersion": "admission.k8s.io/v1"`, `"apiVersion": "admission.k8s.io/v1beta1"`)),
		"a review without apiVersion": postJSON(replace(edit, `"apiVersion": "admission.k8s.io/v1",`, ``)),
		"a review of another kind":    postJSON(replace(edit, `"kind": "AdmissionReview"`, `"kind": "Other"`)),
		"an apiVersion with two slashes": postJSON(replace(edit, `"apiVersion": "admission.k8s.io/v1"`,
			`"apiVersion": "a/b/c"`)),
		"an APIVERSION key":        postJSON(replace(edit, `"kind": "AdmissionReview"`, `"kind": "AdmissionReview", "APIVERSION": "x/v9"`)),
		"an escaped kind key":      postJSON(replace(edit, `"kind": "AdmissionReview"`, `"kind": "AdmissionReview", "\u006bind": "Other"`)),
		"a second request":         postJSON(replace(edit, `"kind": "AdmissionReview"`, `"kind": "AdmissionReview", "request": {"uid": "first", "name": "other"}`)),
		"a null request after it":  postJSON(append(bytes.TrimSuffix(bytes.TrimSpace(edit), []byte("}")), []byte(`, "request": null}`)...)),
		"a review without request": postJSON([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`)),
		"a null object":            postJSON(replace(edit, `"object": {`, `"object": null, "x": {`)),
		"an object that is a number": postJSON(replace(edit, `"object": {`,
			`"object": 5, "x": {`)),
		"an object without kind": postJSON(replace(edit, `"object": {`, `"object": {}, "x": {`)),
		"an object whose apiVersion has two slashes": postJSON(replace(edit, `"apiVersion": "apps/v1"`,
			`"apiVersion": "a/b/c"`)),
		"a response in the review": postJSON(replace(edit, `"kind": "AdmissionReview"`, `"kind": "AdmissionReview", "response": {"uid": "r", "allowed": true}`)),
		"leading white space":      postJSON(append([]byte("  \n"), edit...)),
		"an empty JSON object":     postJSON([]byte("{}")),
		"no body": withRequest(nil, func(r *http.Request) {
			r.Body = http.NoBody
			r.ContentLength = 0
		}),
		"content type text/plain":                      withRequest(edit, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }),
		"content type with a charset":                  withRequest(edit, func(r *http.Request) { r.Header.Set("Content-Type", "application/json; charset=utf-8") }),
		"no content type":                              withRequest(edit, func(r *http.Request) { r.Header.Del("Content-Type") }),
		"a body of exactly controller-runtime's limit": postJSON(padded[:maxRequestSize]),
		"a body one byte under the limit":              postJSON(padded[:maxRequestSize-1]),
		"a body over the limit":                        postJSON(append(padded, ' ')),
		"a body that fails to read": withRequest(edit, func(r *http.Request) {
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(edit[:100]), errReader{errors.New("connection reset")}))
			r.ContentLength = -1
		}),
		"a chunked body": withRequest(edit, func(r *http.Request) {
			r.Body = io.NopCloser(bytes.NewReader(edit))
			r.ContentLength = -1
		}),
	}
	pairs := reviewerPairs(fuzzReviewer(t, capturedReviews(t)))
	for name, newRequest := range tests {
		t.Run(name, func(t *testing.T) {
			for webhook, p := range pairs {
				if err := sameAnswer(p, newRequest); err != nil {
					t.Errorf("%s webhook: %v", webhook, err)
				}
			}
		})
	}
}

// TestDecodeOnceDecodesTheCapturedReviews checks that the differential
// tests compare the single decode, not controller-runtime with itself:
// every captured review decodes, an UPDATE's object and oldObject (a
// /scale's Scale objects too) as JSON objects, and none is left raw.
func TestDecodeOnceDecodesTheCapturedReviews(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "bench", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range capturedReviews(t) {
		paths = append(paths, filepath.Join("testdata", "reviews", name+".json"))
	}
	updates, scales := 0, 0
	for _, p := range paths {
		if strings.HasSuffix(p, ".cluster.json") {
			continue
		}
		dec, err := decode(readFile(t, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if len(dec.request.Object.Raw) != 0 || len(dec.request.OldObject.Raw) != 0 {
			t.Errorf("%s: an object left raw", p)
		}
		if dec.request.Operation != "UPDATE" {
			continue
		}
		updates++
		if dec.request.SubResource == "scale" {
			scales++
		}
		_, newOK := dec.objects.Object.(map[string]any)
		_, oldOK := dec.objects.OldObject.(map[string]any)
		if !newOK || !oldOK {
			t.Errorf("%s: an UPDATE decoded without its objects", p)
		}
	}
	if updates < 34 || scales < 4 {
		t.Errorf("only %d UPDATEs decoded, %d of them /scale", updates, scales)
	}
	t.Logf("%d UPDATEs decoded once, %d of them /scale", updates, scales)
}
