package kinds_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// kindCase is testdata/<kind>/case.yaml: the commands of one kind's
// scenario and what kubectl prints for each. Expected lines are exact
// but for the placeholders of expand.
type kindCase struct {
	// Object is the object as kubectl names it, e.g. service/web.
	Object string `json:"object"`
	// Printed is how kubectl's messages name it, e.g.
	// ingress.networking.k8s.io/web.
	Printed string `json:"printed"`
	// Resource is what kubectl hygiene audit --kind takes, e.g. services.
	Resource string `json:"resource"`
	// ClusterScoped objects are audited with -A.
	ClusterScoped bool `json:"clusterScoped"`
	// Field is the owned field that the edit changes, as a kubectl
	// jsonpath, with its value as applied and as edited.
	Field struct {
		JSONPath string `json:"jsonpath"`
		Applied  string `json:"applied"`
		Edited   string `json:"edited"`
	} `json:"field"`
	// Edit changes Field: the admin's write is denied, printing Denied;
	// the break-glass member's passes, printing EditedStdout and Warned.
	Edit         command  `json:"edit"`
	Denied       []string `json:"denied"`
	Warned       []string `json:"warned"`
	EditedStdout []string `json:"editedStdout"`
	// Addition adds a field that last-applied does not own; it passes
	// without a word, printing AdditionStdout. Added is its jsonpath.
	Addition       command  `json:"addition"`
	AdditionStdout []string `json:"additionStdout"`
	Added          string   `json:"added"`
	// Orphan is what the apply of v2 prints on stderr, Revert the apply
	// of v3.
	Orphan []string `json:"orphan"`
	Revert []string `json:"revert"`
	// Audit is kubectl hygiene audit's table after the edit, Explain
	// kubectl hygiene explain's (each run of spaces made one).
	Audit   []string `json:"audit"`
	Explain []string `json:"explain"`
	// Secrets are values that no output may show.
	Secrets []string `json:"secrets"`
}

// command is a kubectl command line, with an EDITOR script for kubectl edit.
type command struct {
	Kubectl []string `json:"kubectl"`
	Editor  string   `json:"editor"`
}

func loadCase(t *testing.T, dir string) kindCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "case.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c kindCase
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("decoding %s/case.yaml: %v", dir, err)
	}
	return c
}

// placeholders are the parts of an expected line that vary per run: the
// test's namespace, a managedFields time, the file kubectl edit leaves
// behind, an IP address the server allocated, a uid, and the start of
// one that a value's truncation cut.
var placeholders = regexp.MustCompile(`\$(NS|TS|EDITFILE|IP|UID|HEX)`)

// expand turns expected lines into anchored-by-WantMatch patterns.
func expand(ns string, lines []string) []string {
	out := make([]string, len(lines))
	for i, line := range lines {
		var b strings.Builder
		last := 0
		for _, m := range placeholders.FindAllStringSubmatchIndex(line, -1) {
			b.WriteString(regexp.QuoteMeta(line[last:m[0]]))
			switch line[m[2]:m[3]] {
			case "NS":
				b.WriteString(regexp.QuoteMeta(ns))
			case "TS":
				b.WriteString(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
			case "IP":
				b.WriteString(`\d+\.\d+\.\d+\.\d+`)
			case "HEX":
				b.WriteString(`[0-9a-f-]+`)
			case "UID":
				b.WriteString(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
			case "EDITFILE":
				b.WriteString(`/tmp/kubectl-edit-[0-9]+\.yaml`)
			}
			last = m[1]
		}
		b.WriteString(regexp.QuoteMeta(line[last:]))
		out[i] = b.String()
	}
	return out
}
