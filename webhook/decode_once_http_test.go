package webhook

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDecodeOnceKeepsControllerRuntimeHTTPBehaviour holds the answers of
// the single decode byte-identical to controller-runtime's on what it
// answers itself: empty, oversized and unreadable bodies, wrong content
// types, v1beta1 and other review kinds, keys that only encoding/json's
// case-insensitive match reads, malformed JSON and YAML, and objects that
// are not objects.
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
		"a Kind key besides kind": postJSON(replace(edit, `"kind": "AdmissionReview"`, `"kind": "AdmissionReview", "Kind": "Other"`)),
		"an APIVERSION key":       postJSON(replace(edit, `"kind": "AdmissionReview"`, `"kind": "AdmissionReview", "APIVERSION": "x/v9"`)),
		"a kind key with a Kelvin sign": postJSON(replace(edit, `"kind": "AdmissionReview"`,
			"\"kind\": \"AdmissionReview\", \"\u212aind\": \"Other\"")),
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
		"a malformed response":     postJSON(replace(edit, `"kind": "AdmissionReview"`, `"kind": "AdmissionReview", "response": {"allowed": "yes"}`)),
		"leading white space":      postJSON(append([]byte("  \n"), edit...)),
		"trailing garbage":         postJSON(append(append([]byte{}, edit...), []byte("}")...)),
		"not JSON":                 postJSON([]byte("this is {not JSON")),
		"YAML":                     postJSON([]byte("apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest:\n  uid: u1\n")),
		"JSON null":                postJSON([]byte("null")),
		"an empty JSON object":     postJSON([]byte("{}")),
		"an empty body":            postJSON(nil),
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

// scaleRequest matches a /scale review.
var scaleRequest = regexp.MustCompile(`"subResource":\s*"scale"`)

// TestDecodeOnceDecodesTheCapturedReviews checks that the differential
// tests compare the single decode, not controller-runtime with itself:
// every captured UPDATE of an object (not of /scale) is decoded once.
func TestDecodeOnceDecodesTheCapturedReviews(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "bench", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range capturedReviews(t) {
		paths = append(paths, filepath.Join("testdata", "reviews", name+".json"))
	}
	decoded, scales := 0, 0
	for _, p := range paths {
		if strings.HasSuffix(p, ".cluster.json") {
			continue
		}
		body := readFile(t, p)
		dec, ok := decodeReview(body)
		scale := scaleRequest.Match(body)
		if scale {
			scales++
		}
		if ok == scale {
			t.Errorf("%s: decoded once %v, want %v", p, ok, !scale)
			continue
		}
		if ok {
			decoded++
			if dec.objects.Object == nil && dec.request.Operation == "UPDATE" {
				t.Errorf("%s: an UPDATE decoded without its object", p)
			}
		}
	}
	if decoded < 30 || scales < 4 {
		t.Errorf("only %d reviews decoded once and %d /scale reviews", decoded, scales)
	}
	t.Logf("%d reviews decoded once, %d /scale reviews left to controller-runtime", decoded, scales)
}
