package realworld_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// corpusGlobs select the manifests: one directory per project.
var corpusGlobs = []string{"testdata/*/*.yaml", "testdata/*/*.yml"}

// The issue asks for breadth: at least this many workloads from at least
// this many projects.
const (
	minWorkloads = 30
	minProjects  = 8
)

// resources maps the workload kinds of the corpus to their resource names.
var resources = map[string]string{
	"Deployment":  "deployments",
	"StatefulSet": "statefulsets",
	"DaemonSet":   "daemonsets",
}

// workload is one object of the corpus (an apps/v1 workload, or another
// kind of otherKinds or a custom resource), as its manifest has it except
// for metadata.namespace: each object gets its own namespace.
type workload struct {
	// project is the directory under testdata/ that the manifest is in.
	project string
	// file is the manifest's path, relative to the package.
	file       string
	apiVersion string
	kind       string
	name       string
	// plural is the resource name of a kind outside resources, such as
	// "services" or the plural of a custom resource.
	plural string
	// clusterScoped objects keep no namespace.
	clusterScoped bool
	// manifest is the object decoded from YAML, as kubectl decodes it.
	manifest map[string]any
}

// resource is the object's resource name, such as "deployments".
func (w workload) resource() string {
	if w.plural != "" {
		return w.plural
	}
	return resources[w.kind]
}

// isWorkload reports whether the object is an apps/v1 workload, whose day
// is the workload day.
func (w workload) isWorkload() bool { return w.plural == "" }

// urlPath is the object's path on the API server in namespace ns.
func (w workload) urlPath(ns string) string {
	prefix := "/apis/" + w.apiVersion
	if !strings.Contains(w.apiVersion, "/") {
		prefix = "/api/" + w.apiVersion
	}
	if w.clusterScoped {
		return prefix + "/" + w.resource() + "/" + w.name
	}
	return prefix + "/namespaces/" + ns + "/" + w.resource() + "/" + w.name
}

// ref names the workload for kubectl: "deployment/name".
func (w workload) ref() string { return strings.ToLower(w.kind) + "/" + w.name }

// kindKey is the object's "apiVersion Kind", the key of otherKinds and
// of crdsByKind's map.
func (w workload) kindKey() string { return w.apiVersion + " " + w.kind }

// id names the workload in reports and subtest names:
// "project/file.yaml/Kind/name".
func (w workload) id() string {
	return fmt.Sprintf("%s/%s/%s/%s", w.project, filepath.Base(w.file), w.kind, w.name)
}

// corpusFiles lists the manifests of the corpus, sorted.
func corpusFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, glob := range corpusGlobs {
		matches, err := filepath.Glob(glob)
		if err != nil {
			t.Fatalf("listing %s: %v", glob, err)
		}
		files = append(files, matches...)
	}
	sort.Strings(files)
	return files
}

// loadCorpus reads every workload of the corpus, in file order.
func loadCorpus(t *testing.T) []workload {
	t.Helper()
	var out []workload
	for _, file := range corpusFiles(t) {
		ws, err := readWorkloads(file)
		if err != nil {
			t.Fatalf("reading %s: %v", file, err)
		}
		out = append(out, ws...)
	}
	return out
}

// readWorkloads returns the apps/v1 Deployments, StatefulSets and
// DaemonSets of a multi-document YAML file, items of Lists included.
func readWorkloads(file string) ([]workload, error) {
	docs, err := readDocuments(file)
	if err != nil {
		return nil, err
	}
	var out []workload
	for _, d := range docs {
		if w, ok := asWorkload(d.obj); ok {
			w.project, w.file = d.project, d.file
			out = append(out, w)
		}
	}
	return out, nil
}

// splitDocuments decodes each non-empty document of a YAML stream.
func splitDocuments(data []byte) ([]map[string]any, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []map[string]any
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading document %d: %w", i, err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("decoding document %d: %w", i, err)
		}
		if len(obj) > 0 {
			out = append(out, obj)
		}
	}
}

// listItems returns the items of a List document, or the document itself.
func listItems(obj map[string]any) []map[string]any {
	kind, _ := obj["kind"].(string)
	items, ok := obj["items"].([]any)
	if !ok || !strings.HasSuffix(kind, "List") {
		return []map[string]any{obj}
	}
	var out []map[string]any
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// asWorkload picks an apps/v1 workload and drops its namespace.
func asWorkload(obj map[string]any) (workload, bool) {
	kind, _ := obj["kind"].(string)
	if obj["apiVersion"] != "apps/v1" || resources[kind] == "" {
		return workload{}, false
	}
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if name == "" {
		return workload{}, false
	}
	delete(meta, "namespace")
	return workload{apiVersion: "apps/v1", kind: kind, name: name, manifest: obj}, true
}

// projects counts the distinct projects of ws.
func projects(ws []workload) int {
	seen := map[string]bool{}
	for _, w := range ws {
		seen[w.project] = true
	}
	return len(seen)
}
