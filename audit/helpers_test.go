package audit

import (
	"bytes"
	"embed"
	"errors"
	"io"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

//go:embed testdata
var testdata embed.FS

// shared builds the analyzer and the policy engine once for the package.
var shared = sync.OnceValues(func() (*merge.Analyzer, error) { return merge.NewAnalyzer(), nil })

var sharedEngine struct {
	once   sync.Once
	engine *policy.Engine
	err    error
}

func testEngine(t *testing.T) *policy.Engine {
	t.Helper()
	sharedEngine.once.Do(func() {
		sharedEngine.engine, sharedEngine.err = policy.New(t.Context())
	})
	if sharedEngine.err != nil {
		t.Fatal(sharedEngine.err)
	}
	return sharedEngine.engine
}

func testAnalyzer(t *testing.T) *merge.Analyzer {
	t.Helper()
	a, _ := shared()
	return a
}

// readObjects reads every object of testdata/<name>.
func readObjects(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	data, err := testdata.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

var listKinds = map[schema.GroupVersionResource]string{
	{Group: "apps", Version: "v1", Resource: "deployments"}:         "DeploymentList",
	{Group: "apps", Version: "v1", Resource: "statefulsets"}:        "StatefulSetList",
	{Group: "apps", Version: "v1", Resource: "daemonsets"}:          "DaemonSetList",
	{Group: "apps", Version: "v1", Resource: "replicasets"}:         "ReplicaSetList",
	{Group: "apps", Version: "v1", Resource: "controllerrevisions"}: "ControllerRevisionList",
	{Version: "v1", Resource: "namespaces"}:                         "NamespaceList",
	{Version: "v1", Resource: "configmaps"}:                         "ConfigMapList",
}

// newFakeClient returns a fake dynamic client holding objs.
func newFakeClient(objs ...*unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	ros := make([]runtime.Object, len(objs))
	for i, o := range objs {
		ros[i] = o
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, ros...)
}

// withoutMessages keeps what the tests compare exactly; the texts
// (messages and their commands) are the rules', tested in policy.
func withoutMessages(fs []Finding) []Finding {
	out := []Finding{}
	for _, f := range fs {
		f.Message, f.Command, f.Fix, f.NoFix, f.Resource = "", "", nil, "", schema.GroupVersionResource{}
		out = append(out, f)
	}
	return out
}

// namespaceObject is a Namespace with labels, for the scan's FixScope.
func namespaceObject(name string, labels map[string]string) *unstructured.Unstructured {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	ns.SetLabels(labels)
	return ns
}

var fixEngine struct {
	once   sync.Once
	engine *policy.Engine
	err    error
}

// testFixEngine is testEngine with orphaned-field's auditFix knob on, so
// that the periodic audit fixes orphans, whose action is warn.
func testFixEngine(t *testing.T) *policy.Engine {
	t.Helper()
	fixEngine.once.Do(func() {
		cfg := policy.Config{Rules: map[string]policy.RuleConfig{"orphaned-field": {AuditFix: true}}}
		fixEngine.engine, fixEngine.err = policy.New(t.Context(), policy.WithConfig(cfg))
	})
	if fixEngine.err != nil {
		t.Fatal(fixEngine.err)
	}
	return fixEngine.engine
}
