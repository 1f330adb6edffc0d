package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/apply-hygiene/apply-hygiene"

// floors puts each product package on a floor: a package may import only
// packages on lower floors. hack/ and test/ are tooling, not product.
var floors = map[string]int{
	"merge":           0,
	"certs":           0,
	"internal/kube":   0,
	"internal/events": 0,
	// internal/tracing holds the spans every layer that traces uses.
	"internal/tracing": 0,
	// internal/cli/… are the kubectl plugin's packages: its shared
	// helpers, the cluster its live verbs read and the judge they decide
	// with, then its verbs, each below cmd/kubectl-hygiene. clitest is
	// imported by the verbs' tests only.
	"internal/cli":           1,
	"internal/cli/cluster":   2,
	"internal/cli/judge":     3,
	"internal/cli/clitest":   4,
	"internal/cli/explain":   4,
	"internal/cli/diff":      4,
	"internal/cli/testverb":  3,
	"internal/cli/auditverb": 4,
	"internal/cli/junit":     0,
	"internal/cli/linediff":  0,
	"internal/cli/version":   3,
	"internal/cli/handover":  3,
	"internal/cli/migrate":   3,
	"policy":                 1,
	// internal/orphanproof proves merge's orphans with the API server
	// for both drivers of the analysis.
	"internal/orphanproof": 1,
	"internal/review":      2,
	"audit":                2,
	"webhook":              3,
	"reports":              3,
}

// cmdFloor is the floor of every command under cmd/.
const cmdFloor = 5

// pkg is what the test reads of `go list -json`.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

// list runs `go list -json` on every package of the module in the module root. The
// module does not require golang.org/x/tools/go/packages, and adding a
// dependency for one test is not worth it: `go list` is the go command's
// own answer about the build graph, so the test shells out to it.
func list(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		pkgs[strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")] = p
	}
	return pkgs
}

func floorOf(rel string) (int, bool) {
	if strings.HasPrefix(rel, "cmd/") {
		return cmdFloor, true
	}
	f, ok := floors[rel]
	return f, ok
}

// own returns the module's packages among paths, relative to the module.
func own(paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.HasPrefix(p, module+"/") {
			out = append(out, strings.TrimPrefix(p, module+"/"))
		}
	}
	return out
}

func TestNoPackageImportsOneAboveIt(t *testing.T) {
	for rel, p := range list(t) {
		floor, ok := floorOf(rel)
		if !ok {
			continue
		}
		for _, imp := range own(p.Imports) {
			if f, ok := floorOf(imp); ok && f >= floor {
				t.Errorf("%s (floor %d) imports %s (floor %d)", rel, floor, imp, f)
			}
		}
	}
}

// Every product package has a floor: a new one (a verb of the plugin moved
// to internal/cli/<verb>) is placed in floors when it is added.
func TestEveryProductPackageHasAFloor(t *testing.T) {
	for rel := range list(t) {
		if rel == "" || strings.HasPrefix(rel, "hack/") || strings.HasPrefix(rel, "test/") {
			continue
		}
		if _, ok := floorOf(rel); !ok {
			t.Errorf("%s has no floor in test/layout's floors", rel)
		}
	}
}

func TestOnlyTheServerImportsTheWebhook(t *testing.T) {
	pkgs := list(t)
	for _, rel := range []string{"audit", "merge", "policy", "internal/kube", "internal/review"} {
		p, ok := pkgs[rel]
		if !ok {
			t.Fatalf("package %s not listed", rel)
		}
		if slices.Contains(own(p.Deps), "webhook") {
			t.Errorf("go list -deps ./%s contains webhook", rel)
		}
	}
	for rel, p := range pkgs {
		// hack/load is a program too: it serves apply-hygiene in its own
		// process, wired as cmd/apply-hygiene wires it, next to the floor
		// and the peer it is measured against.
		if rel == "webhook" || rel == "cmd/apply-hygiene" || rel == "hack/load" {
			continue
		}
		if slices.Contains(own(p.Deps), "webhook") {
			t.Errorf("%s depends on webhook; only cmd/apply-hygiene (and hack/load, which serves it side by side with its references) may", rel)
		}
	}
}

func TestFactsAndDecisionsImportNoDriver(t *testing.T) {
	pkgs := list(t)
	forbidden := map[string][]string{
		"merge":  {"policy", "webhook", "audit", "internal/review", "internal/kube"},
		"policy": {"webhook", "audit", "internal/review"},
	}
	for rel, drivers := range forbidden {
		deps := own(pkgs[rel].Deps)
		for _, d := range drivers {
			if slices.Contains(deps, d) {
				t.Errorf("%s depends on %s", rel, d)
			}
		}
	}
}

// The e2e framework is one folder, test/e2e/framework: no test, under
// test/ or next to the product's code, imports a package of hack/. The
// one left is hack/node, the real node, which moves once the work on the
// node has landed.
func TestNoTestImportsHack(t *testing.T) {
	for rel, p := range list(t) {
		imports := slices.Concat(p.TestImports, p.XTestImports)
		if strings.HasPrefix(rel, "test/") {
			imports = append(imports, p.Imports...)
		}
		for _, imp := range own(imports) {
			if strings.HasPrefix(imp, "hack/") && imp != "hack/node" {
				t.Errorf("%s imports %s; the e2e framework's packages live in test/e2e/framework", rel, imp)
			}
		}
	}
}
