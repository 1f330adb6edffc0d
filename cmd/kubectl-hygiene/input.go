package main

import (
	"bytes"
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
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

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
		return readObjects(path, in)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("reading %s: %w", path, err))
	}
	if !st.IsDir() {
		return readObjects(path, in)
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
		objs, err := decodeObjects(p, data)
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
	objs, err := decodeObjects(dir, data)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, cli.BadInput(fmt.Errorf("%s: the kustomization has no objects", dir))
	}
	return objs, nil
}

// readObjects reads every object of a YAML or JSON file, one or many
// documents, expanding v1 Lists. "-" reads in. Errors name the file, and
// the document when it is one of them.
func readObjects(path string, in io.Reader) ([]*unstructured.Unstructured, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(in)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("reading %s: %w", path, err))
	}
	out, err := decodeObjects(path, data)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, cli.BadInput(fmt.Errorf("%s: no objects", path))
	}
	return out, nil
}

// decodeObjects decodes the documents of data, read from path; none is no
// error.
func decodeObjects(path string, data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, cli.BadInput(fmt.Errorf("%s: document %d: %w", path, doc, err))
		}
		if len(m) == 0 {
			continue
		}
		objs, err := expandList(&unstructured.Unstructured{Object: m})
		if err != nil {
			return nil, cli.BadInput(fmt.Errorf("%s: document %d: %w", path, doc, err))
		}
		out = append(out, objs...)
	}
	return out, nil
}

func expandList(obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if !obj.IsList() {
		return []*unstructured.Unstructured{obj}, checkObject(obj)
	}
	list, err := obj.ToList()
	if err != nil {
		return nil, fmt.Errorf("decoding list: %w", err)
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		item := &list.Items[i]
		if err := checkObject(item); err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out = append(out, item)
	}
	return out, nil
}

func checkObject(obj *unstructured.Unstructured) error {
	switch {
	case obj.GetAPIVersion() == "":
		return errors.New("missing apiVersion")
	case obj.GetKind() == "":
		return errors.New("missing kind")
	case obj.GetName() == "":
		return errors.New("missing metadata.name")
	}
	return nil
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
