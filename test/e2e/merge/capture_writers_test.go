package merge_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Where the captured stale-writers fixtures go, from this directory.
const mergeStaleWriters = "../../../merge/testdata/stale-writers"

// staleWorkload is one kind of merge/testdata/stale-writers: its v1 and
// v2 (in the kind's directory there) differ in the image and in the env
// var TO_BE_DELETED, which v2 drops.
type staleWorkload struct {
	object, selector, revisions string
	v1Image, v2Image            string
}

var staleWorkloads = map[string]staleWorkload{
	"deployment": {object: "deployment.apps/web", selector: "app=web", revisions: "replicasets", v1Image: "nginx:1.14.2", v2Image: "nginx:broken"},
	"statefulset": {object: "statefulset.apps/my-wonderhoy-app", selector: "app=my-wonderhoy-app", revisions: "controllerrevisions",
		v1Image: "nginx:latest", v2Image: "nginx:a-broken-version"},
	"daemonset": {object: "daemonset.apps/agent", selector: "app=agent", revisions: "controllerrevisions", v1Image: "agent:1", v2Image: "agent:broken"},
}

// staleWriters are the writes that put v1's pod template back after the
// v2 apply: the rollout undo, and hand edits that restore the same
// template.
var staleWriters = map[string]func(t *testing.T, k framework.Kubectl, w staleWorkload){
	"undo": func(t *testing.T, k framework.Kubectl, w staleWorkload) {
		k.Run(t, "rollout", "undo", w.object, "--to-revision=1").MustSucceed(t)
	},
	"edit": func(t *testing.T, k framework.Kubectl, w staleWorkload) {
		// The YAML lines only: the last-applied JSON in the editor keeps
		// v2's values, as a person who edits the fields leaves it.
		editor := framework.WriteFile(t, "editor.sh", fmt.Sprintf(`#!/bin/sh
sed -i -e 's/^\( *\)image: %s$/\1image: %s/' \
  -e 's/^\( *\)- name: ANOTHER_ENV$/\1- name: TO_BE_DELETED\n\1  value: needs to be deleted!\n\1- name: ANOTHER_ENV/' "$1"
`, w.v2Image, w.v1Image), 0o755)
		k.Env = []string{"EDITOR=" + editor, "KUBE_EDITOR=" + editor}
		k.Run(t, "edit", w.object).MustSucceed(t)
	},
	"patch": func(t *testing.T, k framework.Kubectl, w staleWorkload) {
		k.Run(t, "patch", w.object, "--type=json", "-p", `[`+
			`{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"`+w.v1Image+`"},`+
			`{"op":"replace","path":"/spec/template/spec/containers/0/env","value":[`+
			`{"name":"TO_BE_DELETED","value":"needs to be deleted!"},{"name":"ANOTHER_ENV","value":"who cares?"}]}]`).MustSucceed(t)
	},
}

// TestCaptureStaleWriters regenerates merge/testdata/stale-writers from a
// real API server: for each kind, apply v1, apply v2, then put v1's pod
// template back with each writer (kubectl rollout undo, kubectl edit,
// kubectl patch) and record the object and its revisions once the
// controller has renumbered the restored revision to 3. Only with
// -capture.
func TestCaptureStaleWriters(t *testing.T) {
	if !*capture {
		t.Skip("regenerates fixtures; run with -capture")
	}
	for kind, w := range staleWorkloads {
		for writer, write := range staleWriters {
			t.Run(kind+" "+writer, func(t *testing.T) {
				f := framework.New(t)
				k := f.Kubectl
				dir := filepath.Join(mergeStaleWriters, kind)
				k.Run(t, "apply", "-f", filepath.Join(dir, "v1.yaml")).MustSucceed(t)
				f.WaitForRevisions(t, w.selector, 1)
				k.Run(t, "apply", "-f", filepath.Join(dir, "v2.yaml")).MustSucceed(t)
				f.WaitForRevisions(t, w.selector, 2)
				write(t, k, w)
				revisions := waitForRenumbered(t, k, w)
				live := getJSON(t, k, w.object)

				source := fmt.Sprintf(`# Captured from a real API server (%s) by
#   go test ./test/e2e/merge -run TestCaptureStaleWriters -capture
# (see test/e2e/merge/testdata/README.md); do not edit by hand. Apply
# v1.yaml, apply v2.yaml, then kubectl %s.
`, serverVersion(t, k), writerCommand(writer))
				writeYAML(t, filepath.Join(dir, writer+"-live.yaml"), source+"# This file: the object afterwards.\n", live)
				writeYAML(t, filepath.Join(dir, writer+"-revisions.yaml"), source+"# This file: its revisions, v1's (renumbered 3) first.\n", revisions...)
			})
		}
	}
}

func writerCommand(writer string) string {
	switch writer {
	case "undo":
		return "rollout undo --to-revision=1"
	case "edit":
		return "edit, putting back v1's image and TO_BE_DELETED"
	}
	return "patch --type=json, putting back v1's image and env"
}

// waitForRenumbered waits until the controller has renumbered the
// revision whose template v1 made to 3, and returns the revisions: that
// one, then v2's.
func waitForRenumbered(t *testing.T, k framework.Kubectl, w staleWorkload) []map[string]any {
	t.Helper()
	var revs []map[string]any
	framework.Eventually(t, 30*time.Second, "the restored revision renumbered to 3", func(context.Context) (bool, error) {
		out := k.Run(t, "get", w.revisions, "-l", w.selector, "-o", "json", "--show-managed-fields").MustSucceed(t).Stdout
		items, _, _ := unstructured.NestedSlice(decodeJSON(t, out).Object, "items")
		revs = revs[:0]
		for _, item := range items {
			revs = append(revs, item.(map[string]any))
		}
		return len(revs) == 2 && (revisionNumber(revs[0]) == 3 || revisionNumber(revs[1]) == 3), nil
	})
	sort.Slice(revs, func(i, j int) bool { return revisionNumber(revs[i]) > revisionNumber(revs[j]) })
	return revs
}

// revisionNumber is a ReplicaSet's deployment.kubernetes.io/revision or a
// ControllerRevision's revision.
func revisionNumber(rev map[string]any) int64 {
	if n, ok, _ := unstructured.NestedInt64(rev, "revision"); ok {
		return n
	}
	s, _, _ := unstructured.NestedString(rev, "metadata", "annotations", "deployment.kubernetes.io/revision")
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
