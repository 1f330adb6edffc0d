package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite the flags table in docs/server.md")

const (
	tableStart = "<!-- flags:start (go test ./cmd/apply-hygiene -update) -->"
	tableEnd   = "<!-- flags:end -->"
)

// docs/server.md lists exactly the server's flags, with their defaults and
// help text.
func TestServerDocsListEveryFlag(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "server.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start, end := strings.Index(doc, tableStart), strings.Index(doc, tableEnd)
	if start < 0 || end < start {
		t.Fatalf("%s has no %q … %q section", path, tableStart, tableEnd)
	}
	want := flagsTable()
	got := doc[start+len(tableStart) : end]
	if *update {
		doc = doc[:start+len(tableStart)] + want + doc[end:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags table in %s is stale (-want +got), run go test ./cmd/apply-hygiene -update:\n%s", path, diff)
	}
}

func flagsTable() string {
	var opts Options
	fs := pflag.NewFlagSet("apply-hygiene", pflag.ContinueOnError)
	opts.AddFlags(fs)
	var b strings.Builder
	b.WriteString("\n| flag | default | meaning |\n|---|---|---|\n")
	fs.VisitAll(func(f *pflag.Flag) {
		def := f.DefValue
		if f.Name == "namespace" {
			def = "$POD_NAMESPACE"
		}
		if def == "" || def == "[]" {
			def = "—"
		} else {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s |\n", f.Name, def, strings.ReplaceAll(f.Usage, "|", `\|`))
	})
	return b.String()
}
