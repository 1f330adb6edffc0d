package badinput_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/test/jsontree"
)

// Every field of the base review, one at a time, set to null: the
// envelope, object, oldObject and the last-applied inside object. Each
// answer is a clean allow, deny or 400, and none is an internal error.
func TestNullInEveryPositionGetsAClearAnswer(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", baseReview))
	if err != nil {
		t.Fatal(err)
	}
	var base map[string]any
	if err := json.Unmarshal(raw, &base); err != nil {
		t.Fatal(err)
	}
	handlers := newHandlers(t)
	internal := map[string]bool{}
	n := 0
	for _, path := range jsontree.Paths(base) {
		body := withNull(t, base, path, false)
		n++
		for name, h := range handlers {
			got := send(t, h, body)
			checkClean(t, name+" with null at "+jsontree.String(path), got)
			if hasFailOpen(got) {
				internal[jsontree.String(path)] = true
			}
		}
	}
	// Inside last-applied (a JSON string in an annotation).
	for _, path := range lastAppliedPaths(t, base) {
		body := withNull(t, base, path, true)
		n++
		for name, h := range handlers {
			got := send(t, h, body)
			checkClean(t, name+" with null at last-applied "+jsontree.String(path), got)
			if hasFailOpen(got) {
				internal["last-applied:"+jsontree.String(path)] = true
			}
		}
	}
	keys := make([]string, 0, len(internal))
	for k := range internal {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		t.Errorf("%d positions; internal errors (allowed with the failure-policy warning) at %d: %s", n, len(keys), strings.Join(keys, ", "))
	}
}

// checkClean fails t unless got is an allow, a deny with a message or a
// 400 with a message.
func checkClean(t *testing.T, what string, got outcome) {
	t.Helper()
	switch {
	case got.Status == http.StatusBadRequest && !got.Allowed && got.Message != "":
	case got.Status == http.StatusOK && got.Allowed:
	case got.Status == http.StatusOK && !got.Allowed && got.Message != "" && !strings.HasPrefix(got.Message, "panic"):
	default:
		t.Errorf("%s: answer %+v, want an allow, a deny or a 400 with a message", what, got)
	}
}

func hasFailOpen(got outcome) bool {
	for _, w := range got.Warnings {
		if strings.HasPrefix(w, failOpen) {
			return true
		}
	}
	return false
}

// lastAppliedPaths lists the path of every node of object's last-applied.
func lastAppliedPaths(t *testing.T, base map[string]any) [][]any {
	t.Helper()
	var la map[string]any
	if err := json.Unmarshal([]byte(lastAppliedOf(base)), &la); err != nil {
		t.Fatal(err)
	}
	return jsontree.Paths(la)
}

func lastAppliedOf(doc map[string]any) string {
	return review(doc).obj("object")["metadata"].(map[string]any)["annotations"].(map[string]any)[lastAppliedAnnotation].(string)
}

// withNull returns base encoded with the node at path set to null; with
// inLastApplied, the path is inside object's last-applied.
func withNull(t *testing.T, base map[string]any, path []any, inLastApplied bool) []byte {
	t.Helper()
	doc := deepCopy(base)
	if !inLastApplied {
		jsontree.Set(doc, path, nil)
	} else {
		var la map[string]any
		if err := json.Unmarshal([]byte(lastAppliedOf(doc)), &la); err != nil {
			t.Fatal(err)
		}
		jsontree.Set(la, path, nil)
		out, err := json.Marshal(la)
		if err != nil {
			t.Fatal(err)
		}
		review(doc).obj("object")["metadata"].(map[string]any)["annotations"].(map[string]any)[lastAppliedAnnotation] = string(out)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A request body above what the API server ever sends (3 MiB objects, two
// of them) is refused with 413 before it is decoded: controller-runtime
// reads at most 7 MiB.
func TestOversizedBodyIsRefused(t *testing.T) {
	handlers := newHandlers(t)
	body := bytes.Repeat([]byte(" "), 8<<20)
	copy(body, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","object":"`)
	body[len(body)-3], body[len(body)-2], body[len(body)-1] = '"', '}', '}'
	for name, h := range handlers {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "request entity is too large; limit is 7340032 bytes") {
			t.Errorf("%s: HTTP %d %s, want 413 naming the limit", name, rec.Code, rec.Body.String())
		}
	}
}

// A user policy in a --policy-dir that calls http.send does not load: the
// server refuses to start with it, naming the file and line.
func TestPolicyDirWithHTTPSendIsRejected(t *testing.T) {
	dir := t.TempDir()
	src := "package applyhygiene.rules.exfiltrate\n\nx := http.send({\"method\": \"GET\", \"url\": \"http://example.com\"})\n"
	if err := os.WriteFile(filepath.Join(dir, "exfiltrate.rego"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := policy.New(t.Context(), policy.WithDirs(dir))
	want := "exfiltrate.rego:3: rego_type_error: undefined function http.send (apply-hygiene policies may not reach the network, the environment or the runtime)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("policy.New with --policy-dir %s = %v, want an error with %q", dir, err, want)
	}
}
