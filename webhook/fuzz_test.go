package webhook

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/test/jsontree"
	"github.com/apply-hygiene/apply-hygiene/test/reviewtest"
)

// fuzzCallTimeout bounds one handler call: a review that takes longer is a
// hang (the API server gives up after timeoutSeconds, 5 s by default).
const fuzzCallTimeout = 5 * time.Second

// FuzzReview sends AdmissionReviews through both endpoints,
// with the real policy engine and a fake cluster holding every captured
// snapshot. The body is sent as is when the mutation is 0 or the body is
// no JSON object; otherwise the mutation (flip a kind, drop a field, put a
// null or a string anywhere, swap object and oldObject, corrupt
// last-applied, change the operation or subresource) is applied first,
// with value as its argument. The seeds are the captured reviews
// (testdata/reviews) and testdata/fuzz/FuzzReview.
//
// Whatever the input: no panic, no 500, no hang, and an AdmissionReview
// with a response; a denial has a message. To look for more:
//
//	go test ./webhook -run '^$' -fuzz '^FuzzReview$' -fuzztime 10m -parallel 1
func FuzzReview(f *testing.F) {
	names := capturedReviews(f)
	for i, name := range names {
		raw, err := os.ReadFile(filepath.Join("testdata", "reviews", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, uint16(0), "")
		// One structured mutation of each kind per review, rotating.
		f.Add(raw, uint16(1+i%(len(mutations)-1)), "spec")
	}
	handlers := fuzzHandlers(f, names)
	f.Fuzz(func(t *testing.T, body []byte, mutation uint16, value string) {
		body = mutate(body, mutation, value)
		for name, h := range handlers {
			checkReviewAnswer(t, name, h, body)
		}
	})
}

// capturedReviews lists testdata/reviews/<name>.json, without clusters.
func capturedReviews(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "reviews", "*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		if !strings.HasSuffix(p, ".cluster.json") {
			names = append(names, strings.TrimSuffix(filepath.Base(p), ".json"))
		}
	}
	return names
}

// fuzzHandlers returns the validating and mutating handlers over one fake
// cluster that holds the snapshots of all the named reviews.
func fuzzHandlers(tb testing.TB, names []string) map[string]http.Handler {
	tb.Helper()
	r := fuzzReviewer(tb, names)
	return map[string]http.Handler{"validating": r.ValidatingEndpoint(), "mutating": r.MutatingEndpoint()}
}

// fuzzReviewer returns a Reviewer with the real policy engine over one fake
// cluster that holds the snapshots of all the named reviews.
func fuzzReviewer(tb testing.TB, names []string) *Reviewer {
	tb.Helper()
	engine, err := policy.New(tb.Context())
	if err != nil {
		tb.Fatalf("creating the policy engine: %v", err)
	}
	cluster := &fakeCluster{}
	for _, name := range names {
		raw, err := os.ReadFile(filepath.Join("testdata", "reviews", name+".cluster.json"))
		if err != nil {
			tb.Fatal(err)
		}
		list := &unstructured.UnstructuredList{}
		if err := list.UnmarshalJSON(raw); err != nil {
			tb.Fatalf("decoding the cluster of %s: %v", name, err)
		}
		for i := range list.Items {
			cluster.objects = append(cluster.objects, &list.Items[i])
		}
	}
	return NewReviewer(engine, cluster)
}

// checkReviewAnswer posts body to h and fails t unless the answer is a
// clean allow, deny or 400 within fuzzCallTimeout.
func checkReviewAnswer(t *testing.T, name string, h http.Handler, body []byte) {
	t.Helper()
	rec, err := reviewtest.Post(t.Context(), h, "/"+name, body, fuzzCallTimeout)
	if err != nil {
		t.Fatalf("%s: %v for body %q", name, err, truncate(body))
	}
	if err := cleanAnswer(rec.Code, rec.Body.Bytes()); err != nil {
		t.Fatalf("%s: %v\nbody %q", name, err, truncate(body))
	}
}

// cleanAnswer checks one answer: HTTP 200 or 400, an AdmissionReview with
// a response, never code 500, no recovered panic (answered, as any failed
// review under the default failure policy Ignore, with an allowance whose
// warning quotes "panic: … [recovered]"), a message on every denial.
func cleanAnswer(status int, answer []byte) error {
	if status != http.StatusOK && status != http.StatusBadRequest {
		return fmt.Errorf("HTTP %d, want 200 or 400; answer %s", status, answer)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(answer, &review); err != nil {
		return fmt.Errorf("decoding the answer %s: %w", answer, err)
	}
	if review.Response == nil {
		return fmt.Errorf("the answer %s has no response", answer)
	}
	resp := review.Response
	for _, w := range resp.Warnings {
		if strings.Contains(w, "[recovered]") {
			return fmt.Errorf("a recovered panic: %s", w)
		}
	}
	if resp.Allowed {
		return nil
	}
	if resp.Result == nil || resp.Result.Message == "" {
		return fmt.Errorf("a denial without a message: %s", answer)
	}
	if resp.Result.Code >= http.StatusInternalServerError {
		return fmt.Errorf("code %d: %s", resp.Result.Code, resp.Result.Message)
	}
	if (status == http.StatusBadRequest) != (resp.Result.Code == http.StatusBadRequest) {
		return fmt.Errorf("HTTP %d with result code %d", status, resp.Result.Code)
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 512 {
		return string(b[:512]) + "…"
	}
	return string(b)
}

// A mutation changes a decoded AdmissionReview in place, with value as its
// argument.
type mutation func(doc map[string]any, value string)

// mutations are indexed by FuzzReview's mutation argument; 0 sends the body
// unchanged.
var mutations = []mutation{
	nil,
	func(doc map[string]any, v string) { set(doc, v, "request", "kind", "kind") },
	func(doc map[string]any, v string) { set(doc, v, "request", "object", "kind") },
	func(doc map[string]any, v string) { set(doc, v, "request", "object", "apiVersion") },
	func(doc map[string]any, v string) { jsontree.Delete(doc, pick(doc, v)) },
	func(doc map[string]any, v string) { jsontree.Set(doc, pick(doc, v), nil) },
	func(doc map[string]any, v string) { jsontree.Set(doc, pick(doc, v), v) },
	func(doc map[string]any, v string) { jsontree.Set(doc, pick(doc, v), map[string]any{}) },
	func(doc map[string]any, v string) { jsontree.Set(doc, pick(doc, v), []any{v}) },
	swapObjects,
	func(doc map[string]any, v string) { setLastApplied(doc, "object", v) },
	func(doc map[string]any, v string) { setLastApplied(doc, "oldObject", v) },
	corruptLastApplied,
	func(doc map[string]any, v string) { set(doc, v, "request", "operation") },
	func(doc map[string]any, v string) { set(doc, v, "request", "subResource") },
	func(doc map[string]any, v string) { set(doc, v, "request", "name") },
	func(doc map[string]any, v string) { set(doc, []any{v, v}, "request", "userInfo", "groups") },
}

// mutate applies mutations[m % len] to body when body is a JSON object.
func mutate(body []byte, m uint16, value string) []byte {
	fn := mutations[int(m)%len(mutations)]
	if fn == nil {
		return body
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil || doc == nil {
		return body
	}
	fn(doc, value)
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// set sets doc[path...] = v, creating maps on the way; it does nothing
// when a step is not a map.
func set(doc map[string]any, v any, path ...string) {
	m := doc
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			if m[k] != nil {
				return
			}
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// pick chooses one node of doc (by its path) from a hash of value.
func pick(doc map[string]any, value string) []any {
	paths := jsontree.Paths(doc)
	if len(paths) == 0 {
		return nil
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(value))
	return paths[int(h.Sum32()%uint32(len(paths)))]
}

func swapObjects(doc map[string]any, _ string) {
	req, ok := doc["request"].(map[string]any)
	if !ok {
		return
	}
	req["object"], req["oldObject"] = req["oldObject"], req["object"]
}

func setLastApplied(doc map[string]any, which, v string) {
	obj, ok := requestObject(doc, which)
	if !ok {
		return
	}
	set(obj, v, "metadata", "annotations", lastAppliedAnnotation)
}

// corruptLastApplied decodes the object's last-applied, changes one node of
// it (dropped, null or value, by value's hash) and writes it back: valid
// JSON that no longer matches the object.
func corruptLastApplied(doc map[string]any, v string) {
	obj, ok := requestObject(doc, "object")
	if !ok {
		return
	}
	ann, _ := obj["metadata"].(map[string]any)
	annotations, _ := ann["annotations"].(map[string]any)
	la, _ := annotations[lastAppliedAnnotation].(string)
	var parsed map[string]any
	if err := json.Unmarshal([]byte(la), &parsed); err != nil || parsed == nil {
		return
	}
	path := pick(parsed, v)
	switch h := len(v) % 3; h {
	case 0:
		jsontree.Delete(parsed, path)
	case 1:
		jsontree.Set(parsed, path, nil)
	default:
		jsontree.Set(parsed, path, v)
	}
	out, err := json.Marshal(parsed)
	if err != nil {
		return
	}
	annotations[lastAppliedAnnotation] = string(out)
}

func requestObject(doc map[string]any, which string) (map[string]any, bool) {
	req, ok := doc["request"].(map[string]any)
	if !ok {
		return nil, false
	}
	obj, ok := req[which].(map[string]any)
	return obj, ok
}
