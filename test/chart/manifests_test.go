package chart_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// decode splits a multi-document manifest into objects.
func decode(t *testing.T, manifests string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	var objs []*unstructured.Unstructured
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decoding manifests: %v", err)
		}
		if obj != nil {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
}

// only converts the one object of kind into typed.
func only[T any](t *testing.T, objs []*unstructured.Unstructured, kind string) *T {
	t.Helper()
	var found *T
	for _, o := range objs {
		if o.GetKind() != kind {
			continue
		}
		if found != nil {
			t.Fatalf("more than one %s", kind)
		}
		found = new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, found); err != nil {
			t.Fatalf("converting %s: %v", kind, err)
		}
	}
	if found == nil {
		t.Fatalf("no %s rendered", kind)
	}
	return found
}
