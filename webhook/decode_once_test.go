package webhook

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestDecodeOnceEqualsControllerRuntime sends every review of the corpora
// to both webhooks served the old way (controller-runtime's decode, then
// the raw objects decoded: oracleHTTPHandler) and the new way (one
// decode, the endpoints). The reviews an API server sends must get
// byte-identical answers (HTTP status, Content-Type, body): the captured
// reviews (testdata/reviews), the benchmark's reviews (testdata/bench),
// the bad-input corpus (test/badinput/testdata) and updates made of
// merge's fixtures (live → expected). The bodies no API server sends, the
// captured reviews with each of FuzzReview's mutations, the fuzz corpus
// (testdata/fuzz/FuzzReview) and the bad-input corpus's text, must too,
// but for what sameAnswerOrMalformed lets differ.
func TestDecodeOnceEqualsControllerRuntime(t *testing.T) {
	names := capturedReviews(t)
	pairs := reviewerPairs(fuzzReviewer(t, names))
	sent, malformed := map[string][]byte{}, map[string][]byte{}
	for _, name := range names {
		raw := readFile(t, filepath.Join("testdata", "reviews", name+".json"))
		sent["captured "+name] = raw
		for m := 1; m < len(mutations); m++ {
			for _, value := range []string{"spec", "x", "metadata"} {
				malformed[fmt.Sprintf("captured %s, mutation %d %q", name, m, value)] = mutate(raw, uint16(m), value)
			}
		}
	}
	addGlob(t, sent, "bench ", filepath.Join("testdata", "bench", "*.json"))
	addGlob(t, sent, "bad input ", filepath.Join("..", "test", "badinput", "testdata", "*.json"))
	addMergeFixtures(t, sent, filepath.Join("..", "merge", "testdata"))
	malformed["bad input not-json.json"] = sent["bad input not-json.json"] // text, not a review
	delete(sent, "bad input not-json.json")
	addFuzzCorpus(t, malformed, filepath.Join("testdata", "fuzz", "FuzzReview"))
	if len(sent) < 90 || len(malformed) < 1000 {
		t.Fatalf("only %d reviews as sent and %d malformed: a corpus is missing", len(sent), len(malformed))
	}
	patched := 0
	for name, body := range sent {
		for webhook, p := range pairs {
			want, got := serve(p.oracle, postJSON(body)), serve(p.once, postJSON(body))
			if err := compareAnswers(want, got); err != nil {
				t.Errorf("%s, %s webhook: %v", name, webhook, err)
			}
			if strings.Contains(got.Body, `"patchType":"JSONPatch"`) {
				patched++
			}
		}
	}

	for name, body := range malformed {
		for webhook, p := range pairs {
			want, got := serve(p.oracle, postJSON(body)), serve(p.once, postJSON(body))
			if err := answersSameOrMalformed(want, got, body); err != nil {
				t.Errorf("%s, %s webhook: %v", name, webhook, err)
			}
			if strings.Contains(got.Body, `"patchType":"JSONPatch"`) {
				patched++
			}
		}
	}
	// The patches are computed against the object encoded again, not
	// the bytes sent: they must be among the answers compared.
	if patched < 30 {
		t.Errorf("only %d answers with a patch", patched)
	}
	t.Logf("%d reviews as sent and %d malformed, each to both webhooks; %d answers with a patch", len(sent), len(malformed), patched)
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// addGlob adds the files matching pattern (except clusters) to inputs;
// it fails when there is none.
func addGlob(tb testing.TB, inputs map[string][]byte, prefix, pattern string) {
	tb.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no files match %s (%v)", pattern, err)
	}
	for _, p := range paths {
		if !strings.HasSuffix(p, ".cluster.json") {
			inputs[prefix+filepath.Base(p)] = readFile(tb, p)
		}
	}
}

// addFuzzCorpus adds the FuzzReview corpus in dir, each entry mutated as
// FuzzReview mutates it.
func addFuzzCorpus(tb testing.TB, inputs map[string][]byte, dir string) {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		tb.Fatalf("reading the fuzz corpus %s: %v", dir, err)
	}
	for _, e := range entries {
		body, m, value, err := readFuzzEntry(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		inputs["fuzz corpus "+e.Name()] = mutate(body, m, value)
	}
}

// readFuzzEntry reads a FuzzReview corpus file ("go test fuzz v1", then
// []byte, uint16 and string literals, one a line).
func readFuzzEntry(path string) (body []byte, m uint16, value string, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, "", err
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 4 || lines[0] != "go test fuzz v1" {
		return nil, 0, "", fmt.Errorf("%s: not a FuzzReview corpus entry", path)
	}
	b, errB := unquoteCall(lines[1], "[]byte(")
	n, errN := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(lines[2], "uint16("), ")"), 0, 16)
	s, errS := unquoteCall(lines[3], "string(")
	if err := errors.Join(errB, errN, errS); err != nil {
		return nil, 0, "", fmt.Errorf("%s: %w", path, err)
	}
	return []byte(b), uint16(n), s, nil
}

func unquoteCall(line, prefix string) (string, error) {
	if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, ")") {
		return "", fmt.Errorf("%q is no %s…)", line, prefix)
	}
	return strconv.Unquote(line[len(prefix) : len(line)-1])
}

// addMergeFixtures adds, for each of merge's fixtures that has a live and
// an expected object, the UPDATE that client-side apply sends: the live
// object replaced by the expected result.
func addMergeFixtures(tb testing.TB, inputs map[string][]byte, dir string) {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*", "expected.yaml"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no merge fixtures in %s (%v)", dir, err)
	}
	for _, p := range paths {
		fixture := filepath.Dir(p)
		live, errL := yaml.YAMLToJSON(readFile(tb, filepath.Join(fixture, "live.yaml")))
		expected, errE := yaml.YAMLToJSON(readFile(tb, p))
		if err := errors.Join(errL, errE); err != nil {
			tb.Fatalf("%s: %v", fixture, err)
		}
		inputs["merge fixture "+filepath.Base(fixture)] = applyReview(tb, live, expected)
	}
}

// applyReview is the AdmissionReview of kubectl apply's UPDATE of old to
// new.
func applyReview(tb testing.TB, old, new []byte) []byte {
	tb.Helper()
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(new, &head); err != nil {
		tb.Fatalf("reading the object's kind: %v", err)
	}
	group, version, found := strings.Cut(head.APIVersion, "/")
	if !found {
		group, version = "", head.APIVersion
	}
	return fmt.Appendf(nil, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-merge",`+
		`"kind":{"group":%q,"version":%q,"kind":%q},"resource":{"group":%q,"version":%q,"resource":"objects"},`+
		`"name":%q,"namespace":%q,"operation":"UPDATE","userInfo":{"username":"alice"},`+
		`"options":{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"kubectl-client-side-apply"},`+
		`"object":%s,"oldObject":%s}}`,
		group, version, head.Kind, group, version, head.Metadata.Name, head.Metadata.Namespace, new, old)
}

// FuzzDecodeOnceEqualsControllerRuntime sends what FuzzReview sends (a
// body, mutated as FuzzReview mutates it) to both webhooks served the old
// way (oracleHTTPHandler) and with the single decode (the endpoints), and
// requires byte-identical answers, but for what sameAnswerOrMalformed
// lets differ in bodies no API server sends. The seeds are the captured reviews and
// testdata/fuzz/FuzzReview's corpus.
//
//	go test ./webhook -run '^$' -fuzz '^FuzzDecodeOnceEqualsControllerRuntime$' -fuzztime 10m -parallel 1
func FuzzDecodeOnceEqualsControllerRuntime(f *testing.F) {
	names := capturedReviews(f)
	for i, name := range names {
		raw := readFile(f, filepath.Join("testdata", "reviews", name+".json"))
		f.Add(raw, uint16(0), "")
		f.Add(raw, uint16(1+i%(len(mutations)-1)), "spec")
	}
	corpus := filepath.Join("testdata", "fuzz", "FuzzReview")
	entries, err := os.ReadDir(corpus)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		body, m, value, err := readFuzzEntry(filepath.Join(corpus, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, m, value)
	}
	pairs := reviewerPairs(fuzzReviewer(f, names))
	f.Fuzz(func(t *testing.T, body []byte, mutation uint16, value string) {
		body = mutate(body, mutation, value)
		for webhook, p := range pairs {
			if err := sameAnswerOrMalformed(p, body); err != nil {
				t.Fatalf("%s webhook, body %q: %v", webhook, truncate(body), err)
			}
		}
	})
}
