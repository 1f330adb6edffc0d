package reports

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/*.yaml from the objects")

// TestObjects compares the objects that server-side apply receives, in
// both formats, with testdata/<format>.yaml (written with -update from
// the sample of TestBuild and checked by hand against the CRDs: the
// OpenReports ones of github.com/openreports/reports-api v0.2.1
// config/crd, the wgpolicyk8s.io v1alpha2 ones that Kyverno installs).
func TestObjects(t *testing.T) {
	for _, format := range []Format{FormatOpenReports, FormatWGPolicy} {
		t.Run(string(format), func(t *testing.T) {
			var docs []byte
			for _, r := range Build(sample(), scanned, nil, Limits{MaxResults: 2}) {
				obj, err := format.Object(r, Limits{MaxResults: 2})
				if err != nil {
					t.Fatal(err)
				}
				raw, err := yaml.Marshal(obj.Object)
				if err != nil {
					t.Fatal(err)
				}
				docs = append(append(docs, "---\n"...), raw...)
			}
			file := filepath.Join("testdata", string(format)+".yaml")
			if *update {
				if err := os.WriteFile(file, docs, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("reading the golden file (run with -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), string(docs)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"none", "openreports", "wgpolicy"} {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Errorf("ParseFormat(%q) = %q, %v", s, f, err)
		}
	}
	if _, err := ParseFormat("kyverno"); err == nil || err.Error() != `unknown report format "kyverno": want none, openreports or wgpolicy` {
		t.Errorf("ParseFormat(kyverno) error = %v", err)
	}
	if _, err := FormatNone.Object(Report{}, Limits{}); err == nil {
		t.Error("FormatNone.Object: no error")
	}
}
