package diff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
)

func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	return out
}

// -f takes files, directories (their subdirectories with -R), stdin and
// repeats; -k builds a kustomization, as kubectl apply does.
func TestManifestFlagsRead(t *testing.T) {
	web := "Deployment /web"
	tests := map[string]struct {
		flags manifestFlags
		stdin string
		want  []string
	}{
		"a file":      {flags: manifestFlags{Filenames: []string{"testdata/diff/web-v1.yaml"}}, want: []string{"Deployment shop/web"}},
		"a directory": {flags: manifestFlags{Filenames: []string{"testdata/diff/tree"}}, want: []string{web}},
		"a directory with -R, files in lexical order, not .txt": {
			flags: manifestFlags{Filenames: []string{"testdata/diff/tree"}, Recursive: true},
			want:  []string{"ConfigMap /settings", web},
		},
		"stdin": {
			flags: manifestFlags{Filenames: []string{"-"}},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}\n",
			want:  []string{"ConfigMap /a", "ConfigMap /b"},
		},
		"repeated -f, stdin among them": {
			flags: manifestFlags{Filenames: []string{"testdata/diff/web-v1.yaml", "-"}},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
			want:  []string{"Deployment shop/web", "ConfigMap /a"},
		},
		"-k": {
			flags: manifestFlags{Kustomize: "testdata/diff/kustomize"},
			want:  []string{"Deployment shop/web", "ConfigMap shop/settings-g5mh25c546"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if err := tc.flags.validate(); err != nil {
				t.Fatal(err)
			}
			got, err := tc.flags.read(strings.NewReader(tc.stdin))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManifestFlagsErrors(t *testing.T) {
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "blank.yaml"), []byte("---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		flags   manifestFlags
		invalid bool
		wantErr string
	}{
		"nothing named":       {invalid: true, wantErr: "name the manifests with -f/--filename or -k/--kustomize"},
		"-f and -k":           {flags: manifestFlags{Filenames: []string{"a.yaml"}, Kustomize: "dir"}, invalid: true, wantErr: "exclude each other"},
		"-R with -k":          {flags: manifestFlags{Kustomize: "dir", Recursive: true}, invalid: true, wantErr: "-R/--recursive goes with -f"},
		"stdin twice":         {flags: manifestFlags{Filenames: []string{"-", "-"}}, invalid: true, wantErr: "only once"},
		"a missing file":      {flags: manifestFlags{Filenames: []string{"testdata/diff/nope.yaml"}}, wantErr: "reading testdata/diff/nope.yaml"},
		"a directory of none": {flags: manifestFlags{Filenames: []string{empty}}, wantErr: empty + ": no objects"},
		"a bad document":      {flags: manifestFlags{Filenames: []string{"testdata/bad"}}, wantErr: "testdata/bad/no-kind.yaml: document 2: missing kind"},
		"not a kustomization": {flags: manifestFlags{Kustomize: empty}, wantErr: "building the kustomization " + empty},
		"a missing kustomize": {flags: manifestFlags{Kustomize: "testdata/diff/nope"}, wantErr: "building the kustomization testdata/diff/nope"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.flags.validate()
			if err == nil && !tc.invalid {
				_, err = tc.flags.read(strings.NewReader(""))
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if code := cli.Code(err); code != cli.ExitBadInput {
				t.Errorf("exit status %d, want %d (bad input)", code, cli.ExitBadInput)
			}
		})
	}
}
