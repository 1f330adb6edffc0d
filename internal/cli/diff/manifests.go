package diff

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
)

// manifestFlags are kubectl apply's ways to name manifests: -f FILE|DIR|-
// (repeated), -R to walk directories recursively, -k DIR for a
// kustomization.
type manifestFlags struct {
	Filenames []string
	Recursive bool
	Kustomize string
}

func (m *manifestFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringSliceVarP(&m.Filenames, "filename", "f", nil,
		"manifest to apply: a YAML or JSON file (one or many documents), a directory of them, or - for stdin; repeat for more")
	fs.BoolVarP(&m.Recursive, "recursive", "R", false, "process the directories of -f recursively")
	fs.StringVarP(&m.Kustomize, "kustomize", "k", "", "build the kustomization in this directory (as kubectl apply -k) and diff its output")
}

// validate checks that exactly one of -f and -k names the manifests.
func (m *manifestFlags) validate() error {
	switch {
	case len(m.Filenames) == 0 && m.Kustomize == "":
		return cli.BadInput(errors.New("name the manifests with -f/--filename or -k/--kustomize"))
	case len(m.Filenames) > 0 && m.Kustomize != "":
		return cli.BadInput(errors.New("-f/--filename and -k/--kustomize exclude each other"))
	case m.Recursive && m.Kustomize != "":
		return cli.BadInput(errors.New("-R/--recursive goes with -f, not with -k"))
	}
	stdin := 0
	for _, f := range m.Filenames {
		if f == "" {
			return cli.BadInput(errors.New("-f/--filename: empty file name"))
		}
		if f == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return cli.BadInput(errors.New("-f - (stdin) can be given only once"))
	}
	return nil
}

// source names the manifests in messages.
func (m *manifestFlags) source() string {
	if m.Kustomize != "" {
		return m.Kustomize
	}
	return strings.Join(m.Filenames, ",")
}

// readsStdin reports whether -f - is among the files.
func (m *manifestFlags) readsStdin() bool { return slices.Contains(m.Filenames, "-") }

// read returns the objects of the manifests, in order: each -f in turn (a
// directory's files in lexical order, as kubectl visits them), or the
// kustomization's output.
func (m *manifestFlags) read(in io.Reader) ([]*unstructured.Unstructured, error) {
	if m.Kustomize != "" {
		return readKustomization(m.Kustomize)
	}
	var out []*unstructured.Unstructured
	for _, f := range m.Filenames {
		objs, err := readPath(f, m.Recursive, in)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	if len(out) == 0 {
		return nil, cli.BadInput(fmt.Errorf("%s: no objects", m.source()))
	}
	return out, nil
}

// manifestExtensions are the files kubectl reads in a directory.
var manifestExtensions = []string{".json", ".yaml", ".yml"}

// readPath reads a file, stdin, or the manifests of a directory (and of
// its subdirectories when recursive). A directory's files may be empty.
func readPath(path string, recursive bool, in io.Reader) ([]*unstructured.Unstructured, error) {
	if path == "-" {
		return cli.ReadObjects(path, in)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("reading %s: %w", path, err))
	}
	if !st.IsDir() {
		return cli.ReadObjects(path, in)
	}
	var out []*unstructured.Unstructured
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return cli.BadInput(fmt.Errorf("reading %s: %w", p, err))
		}
		if d.IsDir() {
			if p != path && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.Contains(manifestExtensions, filepath.Ext(p)) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return cli.BadInput(fmt.Errorf("reading %s: %w", p, err))
		}
		objs, err := cli.DecodeObjects(p, data)
		if err != nil {
			return err
		}
		out = append(out, objs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readKustomization builds the kustomization in dir with the kustomize
// library kubectl apply -k uses, with kubectl's default options.
func readKustomization(dir string) ([]*unstructured.Unstructured, error) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("building the kustomization %s: %w", dir, err))
	}
	data, err := resources.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("encoding the kustomization %s: %w", dir, err)
	}
	objs, err := cli.DecodeObjects(dir, data)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, cli.BadInput(fmt.Errorf("%s: the kustomization has no objects", dir))
	}
	return objs, nil
}

// objectKey identifies an object across versions of its group.
type objectKey struct {
	groupKind       schema.GroupKind
	namespace, name string
}

func keyOf(obj *unstructured.Unstructured) objectKey {
	return objectKey{groupKind: obj.GroupVersionKind().GroupKind(), namespace: obj.GetNamespace(), name: obj.GetName()}
}

// matchLive finds the live object for a manifest: same group, kind and
// name, and the same namespace, or any namespace when the manifest has none
// (kubectl uses the context's namespace) and only one live object fits.
func matchLive(manifest *unstructured.Unstructured, live []*unstructured.Unstructured) (*unstructured.Unstructured, error) {
	want := keyOf(manifest)
	var found []*unstructured.Unstructured
	for _, l := range live {
		k := keyOf(l)
		if k.groupKind == want.groupKind && k.name == want.name && (want.namespace == "" || k.namespace == want.namespace) {
			found = append(found, l)
		}
	}
	if len(found) > 1 {
		return nil, cli.BadInput(fmt.Errorf("%s %s matches %d live objects in different namespaces: set metadata.namespace in the manifest",
			manifest.GetKind(), manifest.GetName(), len(found)))
	}
	if len(found) == 0 {
		return nil, nil
	}
	return found[0], nil
}
