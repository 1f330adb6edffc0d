package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// ReadObjects reads every object of a YAML or JSON file, one or many
// documents, expanding v1 Lists. "-" reads in. Errors name the file, and
// the document when it is one of them.
func ReadObjects(path string, in io.Reader) ([]*unstructured.Unstructured, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(in)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, BadInput(fmt.Errorf("reading %s: %w", path, err))
	}
	out, err := DecodeObjects(path, data)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, BadInput(fmt.Errorf("%s: no objects", path))
	}
	return out, nil
}

// DecodeObjects decodes the documents of data, read from path; none is no
// error.
func DecodeObjects(path string, data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, BadInput(fmt.Errorf("%s: document %d: %w", path, doc, err))
		}
		if len(m) == 0 {
			continue
		}
		objs, err := expandList(&unstructured.Unstructured{Object: m})
		if err != nil {
			return nil, BadInput(fmt.Errorf("%s: document %d: %w", path, doc, err))
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
