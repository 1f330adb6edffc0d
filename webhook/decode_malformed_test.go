package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
)

// TestDecodeAnswersMalformedBodies pins the answers to bodies no API
// server sends (testdata/malformed), where the single decoder may answer
// otherwise than controller-runtime did: for a body refused, the same HTTP
// status, allowed and code as controller-runtime's answer, with a message
// that names what is wrong; for a top-level key that only encoding/json's
// case-insensitive match reads as kind (controller-runtime then repeats
// that key's kind in its answer), the answer to the review without it.
func TestDecodeAnswersMalformedBodies(t *testing.T) {
	tests := map[string]struct {
		body        string // in testdata/malformed
		wantMessage string
		sameAs      string // in testdata/malformed: the body is answered as this one
	}{
		"an empty body":    {body: "empty.txt", wantMessage: "request body is empty"},
		"text":             {body: "not-json.txt", wantMessage: "the request body is not a JSON object: an AdmissionReview is sent as JSON"},
		"YAML":             {body: "review.yaml", wantMessage: "the request body is not a JSON object: an AdmissionReview is sent as JSON"},
		"JSON null":        {body: "null.json", wantMessage: "the request body is not a JSON object: an AdmissionReview is sent as JSON"},
		"unclosed objects": {body: "unclosed.json", wantMessage: "the request body is not valid JSON: invalid character '{' looking for beginning of object key string"},
		"trailing garbage": {body: "trailing-garbage.json", wantMessage: "the request body is not valid JSON: invalid character '}' after top-level value"},
		"a response whose allowed is a string": {body: "response-not-bool.json",
			wantMessage: "the request body is not an AdmissionReview: json: cannot unmarshal string into Go struct field AdmissionResponse.response.allowed of type bool"},
		"a uid that is a number": {body: "uid-number.json",
			wantMessage: "the request body is not an AdmissionReview: json: cannot unmarshal number into Go struct field requestBody.request.AdmissionRequest.uid of type types.UID"},
		"an UPDATE whose object is a string": {body: "object-string.json", wantMessage: "bad admission request: object is a JSON string, not an object"},
		"an UPDATE without oldObject":        {body: "old-object-missing.json", wantMessage: "bad admission request: oldObject is missing"},
		"an UPDATE whose object has no kind": {body: "object-without-kind.json",
			wantMessage: "bad admission request: object is an object without apiVersion/kind, but the request declares Deployment (apps/v1)"},
		"a /scale whose Scale is a string": {body: "scale-object-string.json", wantMessage: "bad admission request: object is a JSON string, not an object"},
		"a Kind key besides kind":          {body: "kind-key.json", sameAs: "create.json"},
		"a kind key with a Kelvin sign":    {body: "kelvin-kind-key.json", sameAs: "create.json"},
		"a Kind key instead of kind":       {body: "capital-kind-key.json", sameAs: "no-kind.json"},
	}
	pairs := reviewerPairs(fuzzReviewer(t, capturedReviews(t)))
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			body := readFile(t, filepath.Join("testdata", "malformed", tc.body))
			for webhook, p := range pairs {
				got := serve(p.once, postJSON(body))
				oracle := answerOf(t, serve(p.oracle, postJSON(body)))
				if diff := cmp.Diff(oracle.outcome(), answerOf(t, got).outcome()); diff != "" {
					t.Errorf("%s webhook: status, allowed and code differ from controller-runtime's (-controller-runtime +decode once):\n%s", webhook, diff)
				}
				if tc.sameAs != "" {
					want := serve(p.once, postJSON(readFile(t, filepath.Join("testdata", "malformed", tc.sameAs))))
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("%s webhook: answer differs from the one to %s (-want +got):\n%s", webhook, tc.sameAs, diff)
					}
					continue
				}
				want := refusal{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Typed: !isDecodeRefusal(tc.wantMessage),
					Message: tc.wantMessage}
				if diff := cmp.Diff(want, answerOf(t, got).refusal()); diff != "" {
					t.Errorf("%s webhook: answer (-want +got):\n%s\nanswer: %s", webhook, diff, got.Body)
				}
			}
		})
	}
}

// decodedAnswer is an httpAnswer decoded.
type decodedAnswer struct {
	status int
	review admissionv1.AdmissionReview
}

func answerOf(t *testing.T, a httpAnswer) decodedAnswer {
	t.Helper()
	ans, err := parseAnswer(a)
	if err != nil {
		t.Fatal(err)
	}
	return ans
}

func parseAnswer(a httpAnswer) (decodedAnswer, error) {
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal([]byte(a.Body), &review); err != nil {
		return decodedAnswer{}, fmt.Errorf("decoding the answer %s: %w", a.Body, err)
	}
	if review.Response == nil {
		return decodedAnswer{}, fmt.Errorf("the answer %s has no response", a.Body)
	}
	return decodedAnswer{status: a.Status, review: review}, nil
}

// outcome is what the API server acts on in an answer.
type outcome struct {
	Status  int
	Allowed bool
	Code    int32
}

func (a decodedAnswer) outcome() outcome {
	o := outcome{Status: a.status, Allowed: a.review.Response.Allowed}
	if r := a.review.Response.Result; r != nil {
		o.Code = r.Code
	}
	return o
}

// refusal is an answer refusing a review: its HTTP status, whether it
// repeats the review's kind (a review decoded) and its message.
type refusal struct {
	Status  int
	Allowed bool
	Code    int32
	Typed   bool
	Message string
}

func (a decodedAnswer) refusal() refusal {
	o := a.outcome()
	r := refusal{Status: o.Status, Allowed: o.Allowed, Code: o.Code, Typed: a.review.Kind != ""}
	if res := a.review.Response.Result; res != nil {
		r.Message = res.Message
	}
	return r
}

// TestSameAnswerOrMalformedLetsOnlyTheKnownDifferencesThrough checks the
// comparison of the fuzz target and the mutated corpus: every body of
// testdata/malformed passes it, and an answer that differs otherwise (a
// decoder that refused a review controller-runtime reviewed, or that
// dropped a kind without a folded key) does not.
func TestSameAnswerOrMalformedLetsOnlyTheKnownDifferencesThrough(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "malformed", "*"))
	if err != nil {
		t.Fatal(err)
	}
	pairs := reviewerPairs(fuzzReviewer(t, capturedReviews(t)))
	for _, p := range paths {
		if filepath.Base(p) == "README.md" {
			continue
		}
		for webhook, pair := range pairs {
			if err := sameAnswerOrMalformed(pair, readFile(t, p)); err != nil {
				t.Errorf("%s, %s webhook: %v", p, webhook, err)
			}
		}
	}
	create := readFile(t, filepath.Join("testdata", "malformed", "create.json"))
	noKind := readFile(t, filepath.Join("testdata", "malformed", "no-kind.json"))
	validating := pairs["validating"]
	tests := map[string]struct {
		want, got []byte // the bodies whose answers stand for the oracle's and decode once's
		body      []byte
	}{
		"a refusal of a review controller-runtime reviewed": {want: create, got: []byte("null"), body: create},
		"a kind dropped without a folded key":               {want: create, got: noKind, body: create},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want, got := serve(validating.once, postJSON(tc.want)), serve(validating.once, postJSON(tc.got))
			if answersSameOrMalformed(want, got, tc.body) == nil {
				t.Errorf("the answers pass:\n%s\n%s", want.Body, got.Body)
			}
		})
	}
}

// A number beyond float64 in an object (JSON allows it, and the API server
// keeps a RawExtension such as a ControllerRevision's data as sent) is a
// review whose objects do not decode: answered as controller-runtime's
// decoding answered it, a bad request that repeats the review's uid and
// kind, so the API server reads the answer and the failure policy decides.
func TestObjectBeyondFloat64IsABadRequestOfItsReview(t *testing.T) {
	body := readFile(t, filepath.Join("testdata", "number-beyond-float64.json"))
	for webhook, p := range reviewerPairs(fuzzReviewer(t, capturedReviews(t))) {
		got := answerOf(t, serve(p.once, postJSON(body)))
		if diff := cmp.Diff(answerOf(t, serve(p.oracle, postJSON(body))).outcome(), got.outcome()); diff != "" {
			t.Errorf("%s webhook: status, allowed and code differ from controller-runtime's (-controller-runtime +decode once):\n%s", webhook, diff)
		}
		if got.review.Response == nil || got.review.Response.UID != "u-malformed" || got.review.Kind != "AdmissionReview" || got.review.APIVersion != "admission.k8s.io/v1" {
			t.Errorf("%s webhook: answer does not repeat the review's uid and kind: %+v", webhook, got.review)
			continue
		}
		const want = "bad admission request: decoding object: json: cannot unmarshal number 1e400 into Go struct field requestBody.request.object of type float64"
		if msg := got.review.Response.Result.Message; msg != want {
			t.Errorf("%s webhook: message\n got %q\nwant %q", webhook, msg, want)
		}
	}
}
