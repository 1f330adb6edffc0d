package policy

import (
	"bytes"
	"embed"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*/want.json from the decisions")

// fixtures are the policy inputs of testdata/<case>/input.json, written by
// hand from the seeds (the source is named in TestEvaluateFixtures), and
// the expected decisions in want.json.
//
//go:embed testdata
var fixtures embed.FS

// inputDirs lists the fixtures with an input.json: every directory of
// testdata but ownership, which holds configurations.
func inputDirs() ([]fs.DirEntry, error) {
	dirs, err := fixtures.ReadDir("testdata")
	return slices.DeleteFunc(dirs, func(d fs.DirEntry) bool { return !d.IsDir() || d.Name() == "ownership" }), err
}

func loadInput(t testing.TB, name string) *Input {
	t.Helper()
	raw, err := fixtures.ReadFile(path.Join("testdata", name, "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatalf("decoding %s/input.json: %v", name, err)
	}
	return &in
}

func newEngine(t testing.TB, opts ...Option) *Engine {
	t.Helper()
	e, err := New(t.Context(), opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func TestEvaluateFixtures(t *testing.T) {
	tests := map[string]string{
		"an apply after rollout restart warns about restartedAt (seed 003)":  "client-side-apply",
		"an apply after kubectl scale warns that it reverts replicas (002)":  "apply-reverts-drift",
		"an apply dropping replicas of a scaled Deployment is denied (001)":  "replicas-reset",
		"an apply to an object made by kubectl create warns (002, 003)":      "missing-last-applied",
		"an apply with a huge last-applied suggests server-side apply":       "last-applied-too-large",
		"an apply switching a StatefulSet to OnDelete repairs rollingUpdate": "defaulted-dependent",
		"a server-side apply after an undo warns about the kept env (004)":   "server-side-apply",
		"kubectl edit of an image that last-applied owns is denied (001)":    "imperative",
		"kubectl scale of replicas that last-applied owns is denied (002)":   "scale",
		"rollout undo with a stale last-applied is repaired (seed 004)":      "rollout-undo",
		"an undo whose template another webhook stamped only warns (004)":    "rollout-undo-unconfirmed",
		"rollout restart touching no owned field is allowed (seed 003)":      "rollout-restart",
		"a controller's write is never reported":                             "controller",
		"an edit of an object whose last-applied is not JSON warns":          "invalid-last-applied",
		"a clean apply is allowed":                                           "clean-apply",
	}
	e := newEngine(t)
	for name, dir := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := e.Evaluate(t.Context(), loadInput(t, dir))
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			wantFile := filepath.Join("testdata", dir, "want.json")
			if *update {
				writeJSON(t, wantFile, got)
			}
			var want []Decision
			raw, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatalf("reading want.json (run with -update to create it): %v", err)
			}
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFixturesMatchInput checks that every fixture is exactly an Input:
// decoding and encoding it again loses and adds nothing, so the documented
// contract and the Go types agree.
func TestFixturesMatchInput(t *testing.T) {
	dirs, err := inputDirs()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		t.Run(dir.Name(), func(t *testing.T) {
			raw, err := fixtures.ReadFile(path.Join("testdata", dir.Name(), "input.json"))
			if err != nil {
				t.Fatal(err)
			}
			again, err := json.Marshal(loadInput(t, dir.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decodeAny(t, raw), decodeAny(t, again)); diff != "" {
				t.Errorf("input.json and Input differ (-file +Input):\n%s", diff)
			}
		})
	}
}

func decodeAny(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func writeJSON(t *testing.T, name string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
