package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

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
		return nil, badInput(fmt.Errorf("reading %s: %w", path, err))
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, badInput(fmt.Errorf("%s: document %d: %w", path, doc, err))
		}
		if len(m) == 0 {
			continue
		}
		objs, err := expandList(&unstructured.Unstructured{Object: m})
		if err != nil {
			return nil, badInput(fmt.Errorf("%s: document %d: %w", path, doc, err))
		}
		out = append(out, objs...)
	}
	if len(out) == 0 {
		return nil, badInput(fmt.Errorf("%s: no objects", path))
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
		return nil, badInput(fmt.Errorf("%s %s matches %d live objects in different namespaces: set metadata.namespace in the manifest",
			manifest.GetKind(), manifest.GetName(), len(found)))
	}
	if len(found) == 0 {
		return nil, nil
	}
	return found[0], nil
}
