package clitest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// NoInstallation is what a connected verb says on stderr about its
// policies where the fake cluster has no chart installed.
const NoInstallation = "using the default policy configuration and no user policies\n" +
	"note: no apply-hygiene ConfigMaps in namespace apply-hygiene; set --hygiene-namespace to where the chart is installed\n"

// Analyzer is the analyzer the verbs get in tests: merge's, without a
// cluster's schemas (a fake cluster has none).
var Analyzer = sync.OnceValue(func() *merge.Analyzer { return merge.NewAnalyzer() })

// NewCmdFunc builds a verb's command on streams.
type NewCmdFunc func(streams genericiooptions.IOStreams) *cobra.Command

// Run runs the command that newCmd builds with args, in-process, as main
// runs the plugin, and returns what it printed and its exit status.
func Run(ctx context.Context, newCmd NewCmdFunc, args ...string) (stdout, stderr string, code int) {
	return RunIn(ctx, nil, newCmd, args...)
}

// RunIn is Run with in as standard input.
func RunIn(ctx context.Context, in []byte, newCmd NewCmdFunc, args ...string) (stdout, stderr string, code int) {
	streams, stdin, out, errOut := genericiooptions.NewTestIOStreams()
	stdin.Write(in)
	code = cli.Execute(ctx, newCmd(streams), streams.ErrOut, args)
	return out.String(), errOut.String(), code
}

// kinds are the kinds that FakeCluster serves.
var kinds = []struct {
	gvk      schema.GroupVersionKind
	resource string
}{
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "deployments"},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, "statefulsets"},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}, "daemonsets"},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, "replicasets"},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ControllerRevision"}, "controllerrevisions"},
	{schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}, "horizontalpodautoscalers"},
	{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps"},
	{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces"},
	{schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}, "validatingwebhookconfigurations"},
}

// FakeCluster returns a ConnectFunc to a fake API server holding the
// objects of files, which serves the workloads, their revisions and
// autoscalers, ConfigMaps, Namespaces and ValidatingWebhookConfigurations.
func FakeCluster(t testing.TB, files ...string) cluster.ConnectFunc {
	t.Helper()
	var objs []runtime.Object
	for _, f := range files {
		read, err := cli.ReadObjects(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range read {
			objs = append(objs, o)
		}
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	lists := map[schema.GroupVersionResource]string{}
	for _, k := range kinds {
		scope := meta.RESTScopeNamespace
		if k.gvk.Kind == "Namespace" || k.gvk.Kind == "ValidatingWebhookConfiguration" {
			scope = meta.RESTScopeRoot
		}
		mapper.Add(k.gvk, scope)
		lists[k.gvk.GroupVersion().WithResource(k.resource)] = k.gvk.Kind + "List"
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, objs...)
	return func(*genericclioptions.ConfigFlags) (*cluster.Cluster, error) {
		return cluster.New(client, mapper), nil
	}
}

// Golden compares got with the file at path, rewriting the file instead
// when update is set (the test package's -update flag).
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// RuleActions decodes a {"findings": [...]} document (-o json of diff,
// explain or audit) and lists "rule action" per finding.
func RuleActions(t testing.TB, stdout string) []string {
	t.Helper()
	var got struct {
		Findings []judge.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("decoding findings: %v\n%s", err, stdout)
	}
	var out []string
	for _, f := range got.Findings {
		out = append(out, string(f.Rule)+" "+f.Action)
	}
	return out
}

// WithoutMessages is fs without their messages and commands, which tests
// pin in goldens: what the tests compare exactly.
func WithoutMessages(fs []judge.Finding) []judge.Finding {
	out := []judge.Finding{}
	for _, f := range fs {
		f.Message, f.Fix = "", ""
		out = append(out, f)
	}
	return out
}
