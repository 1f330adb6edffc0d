package generative_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// object is one object of the real-world corpus that sequences write.
type object struct {
	// file is the corpus file, under test/e2e/realworld/testdata.
	file string
	// kind and name pick the object in file.
	kind, name string
	// manifest is the object without its namespace.
	manifest map[string]any
}

// ref is the object as kubectl names it.
func (o object) ref() string { return strings.ToLower(o.kind) + "/" + o.name }

// workload reports whether the object has a pod template.
func (o object) workload() bool {
	return o.kind == "Deployment" || o.kind == "StatefulSet" || o.kind == "DaemonSet"
}

// picks are the corpus objects the sequences write: Deployments, a
// StatefulSet, a DaemonSet, a Service and a ConfigMap, each intercepted
// with kinds=common.
var picks = []object{
	{file: "microservices-demo/kubernetes-manifests.yaml", kind: "Deployment", name: "frontend"},
	{file: "microservices-demo/kubernetes-manifests.yaml", kind: "Deployment", name: "adservice"},
	{file: "kubernetes-examples/minio-standalone-deployment.yaml", kind: "Deployment", name: "minio-deployment"},
	{file: "kubernetes-website/web-parallel.yaml", kind: "StatefulSet", name: "web"},
	{file: "kube-prometheus/nodeExporter-daemonset.yaml", kind: "DaemonSet", name: "node-exporter"},
	{file: "kubernetes-website/web-parallel.yaml", kind: "Service", name: "nginx"},
	{file: "descheduler/configmap.yaml", kind: "ConfigMap", name: "descheduler-policy-configmap"},
}

// corpusDir is the real-world corpus.
const corpusDir = "../realworld/testdata"

// loadPicks reads the picked objects from the corpus.
func loadPicks() ([]object, error) {
	out := make([]object, 0, len(picks))
	for _, p := range picks {
		m, err := find(filepath.Join(corpusDir, p.file), p.kind, p.name)
		if err != nil {
			return nil, err
		}
		meta, _ := m["metadata"].(map[string]any)
		delete(meta, "namespace")
		p.manifest = m
		out = append(out, p)
	}
	return out, nil
}

// find returns the object of kind and name in a multi-document YAML or
// JSON file.
func find(file, kind, name string) (map[string]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the corpus: %w", err)
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s has no %s %s", file, kind, name)
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", file, err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		if obj["kind"] == kind && meta["name"] == name {
			return obj, nil
		}
	}
}
