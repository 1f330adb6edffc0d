package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// fakeCluster returns a cluster.ConnectFunc to a fake cluster holding the objects
// of files.
func fakeCluster(t *testing.T, files ...string) cluster.ConnectFunc {
	t.Helper()
	var objs []runtime.Object
	for _, f := range files {
		read, err := readObjects(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range read {
			objs = append(objs, o)
		}
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	lists := map[schema.GroupVersionResource]string{}
	for _, k := range []struct {
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
	} {
		scope := meta.RESTScopeNamespace
		if k.gvk.Kind == "Namespace" {
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

// noInstallation is what a connected verb says on stderr about its
// policies where the fake cluster has no chart installed.
const noInstallation = "using the default policy configuration and no user policies\n" +
	"note: no apply-hygiene ConfigMaps in namespace apply-hygiene; set --hygiene-namespace to where the chart is installed\n"

// runCluster runs the command line in-process against connect.
func runCluster(t *testing.T, connect cluster.ConnectFunc, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code = runWith(t.Context(), streams, args, connect)
	return out.String(), errOut.String(), code
}

type auditOutput struct {
	Findings []judge.Finding `json:"findings"`
}

func TestAudit(t *testing.T) {
	connect := fakeCluster(t, "testdata/cluster/deployment-edited.yaml", "testdata/cluster/deployment-created.yaml",
		"testdata/seed004/live.yaml", "testdata/seed004/controllerrevisions.yaml")
	web := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	made := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "made"}
	sts := merge.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "default", Name: "my-wonderhoy-app"}
	edit := judge.Finding{Rule: "imperative-edit", Action: "deny", Path: "spec.template.spec.containers[name=nginx].image", Object: web}
	missing := judge.Finding{Rule: "missing-last-applied", Action: "warn", Path: judge.LastAppliedPath, Object: made}
	stale := judge.Finding{Rule: "stale-last-applied", Action: "repair", Path: judge.LastAppliedPath, Object: sts}
	warnEdits := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(warnEdits, []byte("rules:\n  imperative-edit:\n    action: warn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args []string
		code int
		want []judge.Finding
	}{
		"every namespace; a deny exits 1": {
			args: []string{"audit", "-A", "-o", "json"}, code: exitFailure, want: []judge.Finding{stale, missing, edit},
		},
		"one namespace": {
			args: []string{"audit", "-n", "default", "-o", "json"}, code: exitOK, want: []judge.Finding{stale},
		},
		"the policy configuration sets the actions": {
			args: []string{"audit", "-n", "shop", "-o", "json", "--policy-config", warnEdits}, code: exitOK,
			want: []judge.Finding{missing, {Rule: edit.Rule, Action: "warn", Path: edit.Path, Object: web}},
		},
		"--kind adds kinds": {
			args: []string{"audit", "-n", "shop", "-o", "json", "--kind", "configmaps,deployment"}, code: exitFailure, want: []judge.Finding{missing, edit},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runCluster(t, connect, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			var got auditOutput
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("decoding %q: %v", stdout, err)
			}
			if diff := cmp.Diff(tc.want, clitest.WithoutMessages(got.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, f := range got.Findings {
				if !strings.HasPrefix(f.Message, "["+string(f.Rule)+"] "+f.Object.Kind+" "+f.Object.Namespace+"/"+f.Object.Name+": ") {
					t.Errorf("message %q", f.Message)
				}
			}
		})
	}
}

func TestAuditTableAndProgress(t *testing.T) {
	connect := fakeCluster(t, "testdata/cluster/deployment-edited.yaml")
	stdout, stderr, code := runCluster(t, connect, "audit", "-n", "shop", "--progress")
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	lines := strings.Split(stdout, "\n")
	wantHead := []string{
		"NAMESPACE   OBJECT           RULE              ACTION   PATH",
		"shop        Deployment/web   imperative-edit   deny     spec.template.spec.containers[name=nginx].image",
		"",
	}
	if diff := cmp.Diff(wantHead, lines[:3]); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(lines[3], "[imperative-edit] Deployment shop/web: ") {
		t.Errorf("message line %q", lines[3])
	}
	wantErr := noInstallation + "scanned 1 objects (listing deployments.apps), 1 findings\n" +
		"scanned 1 objects (listing statefulsets.apps), 1 findings\n" +
		"scanned 1 objects (listing daemonsets.apps), 1 findings\n" +
		"error: 1 finding(s) with the action deny\n"
	if diff := cmp.Diff(wantErr, stderr); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}

func TestAuditNoFindings(t *testing.T) {
	stdout, stderr, code := runCluster(t, fakeCluster(t, "testdata/seed004/live.yaml"), "audit", "-n", "shop")
	if code != exitOK || stdout != "No findings in 0 objects.\n" || stderr != noInstallation {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestAuditBadKindAndConfig(t *testing.T) {
	connect := fakeCluster(t)
	bad := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  imperative-edit:\n    action: shout\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"an unknown kind":          {args: []string{"audit", "-A", "--kind", "widgets"}, wantErr: `unknown kind "widgets"`},
		"an invalid configuration": {args: []string{"audit", "-A", "--policy-config", bad}, wantErr: "validating --policy-config " + bad + `: rules[imperative-edit].action: Unsupported value: "shout"`},
		"a missing configuration":  {args: []string{"audit", "-A", "--policy-config", "testdata/nope.yaml"}, wantErr: "reading --policy-config"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stderr, code := runCluster(t, connect, tc.args...)
			if code != exitBadInput || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitBadInput, tc.wantErr)
			}
		})
	}
}
