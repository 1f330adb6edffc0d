package merge_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

var capture = flag.Bool("capture", false, "capture the seed 004 fixtures of merge and kubectl-hygiene from the real API server (see testdata/README.md)")

// Where the captured fixtures go, from this directory: merge's, and the
// copy of the live object in the testdata of each verb of the plugin
// whose tests read it.
const mergeSeed004 = "../../../merge/testdata/seed004-undo"

var cliSeed004 = []string{
	"../../../cmd/kubectl-hygiene/testdata/seed004",
	"../../../internal/cli/explain/testdata/seed004",
	"../../../internal/cli/diff/testdata/seed004",
	"../../../internal/cli/auditverb/testdata/seed004",
}

// TestCaptureSeed004 regenerates the seed 004 fixtures from a real API
// server: apply v1, apply v2, `kubectl rollout undo --to-revision=1`, apply
// v3, reading the manifests from merge/testdata/seed004-undo. It runs in
// the namespace "default", the fixtures' namespace, and only with -capture.
func TestCaptureSeed004(t *testing.T) {
	if !*capture {
		t.Skip("regenerates fixtures; run with -capture")
	}
	f := framework.New(t)
	k := f.Kubectl
	k.Namespace = "default"
	const sts = "statefulset.apps/my-wonderhoy-app"
	k.Run(t, "delete", sts, "--ignore-not-found").MustSucceed(t)
	t.Cleanup(func() { k.Run(t, "delete", sts, "--ignore-not-found") })

	k.Run(t, "apply", "-f", filepath.Join(mergeSeed004, "v1.yaml")).MustSucceed(t)
	waitForObserved(t, f, 1)
	k.Run(t, "apply", "-f", filepath.Join(mergeSeed004, "original.yaml")).MustSucceed(t)
	waitForObserved(t, f, 2)
	beforeUndo := getJSON(t, k, sts)
	revisions := getRevisions(t, k)
	if len(revisions) != 2 {
		t.Fatalf("%d ControllerRevisions before the undo, want 2", len(revisions))
	}
	k.Run(t, "rollout", "undo", sts, "--to-revision=1").MustSucceed(t)
	waitForObserved(t, f, 3)
	live := getJSON(t, k, sts)
	k.Run(t, "apply", "-f", filepath.Join(mergeSeed004, "modified.yaml")).MustSucceed(t)
	waitForObserved(t, f, 4)
	afterApply := getJSON(t, k, sts)

	server := serverVersion(t, k)
	source := fmt.Sprintf(`# Captured from a real API server (%s) by
#   go test ./test/e2e/merge -run TestCaptureSeed004 -capture
# (see test/e2e/merge/testdata/README.md); do not edit by hand. Seed 004:
# apply v1.yaml, apply original.yaml (v2: TO_BE_DELETED removed, broken
# image), kubectl rollout undo --to-revision=1, apply modified.yaml (v3).
`, server)
	writeYAML(t, filepath.Join(mergeSeed004, "before-undo.yaml"), source+"# This file: the StatefulSet after the v2 apply, before the undo.\n", beforeUndo)
	writeYAML(t, filepath.Join(mergeSeed004, "revisions.yaml"), source+"# This file: the ControllerRevisions that the undo read.\n", revisions...)
	writeYAML(t, filepath.Join(mergeSeed004, "live.yaml"), source+"# This file: the StatefulSet after the undo.\n", live)
	writeYAML(t, filepath.Join(mergeSeed004, "expected.yaml"), source+"# This file: the StatefulSet as stored after the v3 apply.\n", afterApply)
	for _, dir := range cliSeed004 {
		writeYAML(t, filepath.Join(dir, "live.yaml"), strings.ReplaceAll(source, "original.yaml", "merge/testdata/seed004-undo/original.yaml")+
			"# This file: the StatefulSet after the undo (as merge/testdata/seed004-undo/live.yaml).\n", live)
	}
}

// waitForObserved waits until the StatefulSet controller has observed
// generation n of my-wonderhoy-app in the namespace default.
func waitForObserved(t *testing.T, f *framework.Framework, n int64) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, fmt.Sprintf("generation %d observed", n), func(ctx context.Context) (bool, error) {
		s, err := f.Client.AppsV1().StatefulSets("default").Get(ctx, "my-wonderhoy-app", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return s.Generation == n && s.Status.ObservedGeneration == n, nil
	})
}

func getJSON(t *testing.T, k framework.Kubectl, object string) map[string]any {
	t.Helper()
	return decodeJSON(t, k.Run(t, "get", object, "-o", "json", "--show-managed-fields").MustSucceed(t).Stdout).Object
}

// getRevisions returns the StatefulSet's ControllerRevisions, oldest first.
func getRevisions(t *testing.T, k framework.Kubectl) []map[string]any {
	t.Helper()
	out := k.Run(t, "get", "controllerrevisions", "-l", "app=my-wonderhoy-app", "-o", "json", "--show-managed-fields").MustSucceed(t).Stdout
	list := decodeJSON(t, out)
	items, _, _ := unstructured.NestedSlice(list.Object, "items")
	var revs []map[string]any
	for _, item := range items {
		revs = append(revs, item.(map[string]any))
	}
	sort.Slice(revs, func(i, j int) bool {
		ri, _, _ := unstructured.NestedInt64(revs[i], "revision")
		rj, _, _ := unstructured.NestedInt64(revs[j], "revision")
		return ri < rj
	})
	return revs
}

func serverVersion(t *testing.T, k framework.Kubectl) string {
	t.Helper()
	var v struct {
		ServerVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	out := k.Run(t, "version", "-o", "json").MustSucceed(t).Stdout
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("decoding kubectl version: %v", err)
	}
	return "kube-apiserver " + v.ServerVersion.GitVersion
}

// writeYAML writes objs as YAML documents after a comment header.
func writeYAML(t *testing.T, path, header string, objs ...map[string]any) {
	t.Helper()
	var b strings.Builder
	b.WriteString(header)
	for i, obj := range objs {
		if i > 0 || len(objs) > 1 {
			b.WriteString("---\n")
		}
		data, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}
