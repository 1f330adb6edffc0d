package policy_test

import (
	"context"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// A Deployment whose manifest has a finalizer, deleted with --wait=false:
// it stays, with a deletionTimestamp, until the finalizer goes. Under
// failurePolicy Fail, every write that lets the deletion finish passes
// without a word — whoever sends it, and although last-applied owns the
// finalizers — and so does a label change by a person.
func TestWritesToAnObjectBeingDeleted(t *testing.T) {
	framework.WithFailurePolicy(t, "Fail")
	removeAll := []string{"patch", "deployment/web", "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`}
	tests := map[string]struct {
		serviceAccount bool
		patch          []string
	}{
		"a person removes the finalizers with a JSON patch": {patch: removeAll},
		"a person removes the finalizers with a merge patch, as kubectl edit sends": {
			patch: []string{"patch", "deployment/web", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`}},
		"a service account removes the finalizers": {serviceAccount: true, patch: removeAll},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			applyManifest(t, k, workload("Deployment", "web", []string{"replicas: 1"}, []string{"finalizers: [example.com/hold]"})).MustSucceed(t)
			k.Run(t, "delete", "deployment/web", "--wait=false").MustSucceed(t)
			if k.JSONPath(t, "deployment/web", "{.metadata.deletionTimestamp}") == "" {
				t.Fatal("deployment/web has no deletionTimestamp after kubectl delete --wait=false")
			}

			label := k.Run(t, "label", "deployment/web", "team=a").MustSucceed(t)
			framework.WantLines(t, label.Stdout, "deployment.apps/web labeled")
			framework.WantLines(t, label.Stderr)

			writer := k
			if tc.serviceAccount {
				writer = f.KubectlAsServiceAccount(t, "finalizer-owner")
			}
			res := writer.Run(t, tc.patch...).MustSucceed(t)
			framework.WantLines(t, res.Stdout, "deployment.apps/web patched")
			framework.WantLines(t, res.Stderr)
			framework.Eventually(t, 30*time.Second, "deployment/web to be gone", func(context.Context) (bool, error) {
				get := k.Run(t, "get", "deployment/web", "--ignore-not-found", "-o", "name")
				return get.ExitCode == 0 && get.Stdout == "", nil
			})
		})
	}
}
