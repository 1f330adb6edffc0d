package seeds_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seeds 000/001/002, "merge individual elements of a list of complex
// elements": containers merge by name. nginx-helper-a (in last-applied, not
// in the manifest) is deleted; nginx-helper-b keeps the args set outside
// apply; nginx-helper-c is added; nginx-helper-d (never in last-applied) is
// kept. The seeds leave the order open; the server keeps the live elements
// first and appends the new one.
func TestSeedMergeContainersByPatchMergeKey(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const deploy = "deployment.apps/merge-example"

	k.Run(t, "apply", "-f", "testdata/containers-last-applied.yaml").MustSucceed(t)
	k.Run(t, "patch", deploy, "-p",
		`{"spec":{"template":{"spec":{"containers":[{"name":"nginx-helper-b","args":["run"]},{"name":"nginx-helper-d","image":"helper:1.3"}]}}}}`).MustSucceed(t)
	framework.WantLines(t, k.JSONPath(t, deploy, `{range .spec.template.spec.containers[*]}{.name} {.image} {.args}{"\n"}{end}`),
		"nginx nginx:1.10 ",
		"nginx-helper-a helper:1.3 ",
		`nginx-helper-b helper:1.3 ["run"]`,
		"nginx-helper-d helper:1.3 ")

	framework.WantLines(t, k.Run(t, "apply", "-f", "testdata/containers-manifest.yaml").MustSucceed(t).Stdout, deploy+" configured")
	framework.WantLines(t, k.JSONPath(t, deploy, `{range .spec.template.spec.containers[*]}{.name} {.image} {.args}{"\n"}{end}`),
		"nginx nginx:1.11 ",
		`nginx-helper-b helper:1.3 ["run"]`,
		"nginx-helper-d helper:1.3 ",
		"nginx-helper-c helper:1.3 ")
}

// Seeds 000/002, "replace the list": args has no patchStrategy, so the
// manifest's list replaces the live one, and the "d" added outside apply is
// lost.
func TestSeedMergeArgsListReplaced(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const deploy = "deployment.apps/args-example"

	k.Run(t, "apply", "-f", "testdata/args-last-applied.yaml").MustSucceed(t)
	k.Run(t, "patch", deploy, "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"app","args":["a","b","d"]}]}}}}`).MustSucceed(t)
	framework.WantLines(t, k.JSONPath(t, deploy, "{.spec.template.spec.containers[0].args}"), `["a","b","d"]`)
	k.Run(t, "apply", "-f", "testdata/args-manifest.yaml").MustSucceed(t)
	framework.WantLines(t, k.JSONPath(t, deploy, "{.spec.template.spec.containers[0].args}"), `["a","c"]`)
}

// Seed 001, "merge a list of primitives": metadata.finalizers has
// patchStrategy merge, so it merges like an ordered set: "b" (last-applied,
// not in the manifest) goes, "c" comes, "d" (added outside apply) stays.
func TestSeedMergeFinalizersListOfPrimitives(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const cm = "configmap/finalizers-example"
	t.Cleanup(func() {
		// Finalizers would keep the namespace from being deleted.
		k.Run(t, "patch", cm, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	})

	k.Run(t, "apply", "-f", "testdata/finalizers-last-applied.yaml").MustSucceed(t)
	k.Run(t, "patch", cm, "--type=json", "-p", `[{"op":"add","path":"/metadata/finalizers/-","value":"apply-hygiene.io/d"}]`).MustSucceed(t)
	framework.WantLines(t, k.JSONPath(t, cm, "{.metadata.finalizers}"), `["apply-hygiene.io/a","apply-hygiene.io/b","apply-hygiene.io/d"]`)
	k.Run(t, "apply", "-f", "testdata/finalizers-manifest.yaml").MustSucceed(t)
	framework.WantLines(t, k.JSONPath(t, cm, "{.metadata.finalizers}"), `["apply-hygiene.io/a","apply-hygiene.io/c","apply-hygiene.io/d"]`)
}

// Seed 001, "field deletion": removing replicas and minReadySeconds from the
// manifest deletes both; the server then defaults replicas back to 1.
func TestSeedMergeRemovedFieldsDeletedAndReplicasRedefaulted(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const deploy = "deployment.apps/nginx-deployment"

	k.Run(t, "apply", "-f", "testdata/replicas-set.yaml").MustSucceed(t)
	framework.WantLines(t, k.JSONPath(t, deploy, "{.spec.replicas}|{.spec.minReadySeconds}"), "2|3")
	k.Run(t, "apply", "-f", "testdata/replicas-removed.yaml").MustSucceed(t)
	framework.WantLines(t, k.JSONPath(t, deploy, "{.spec.replicas}|{.spec.minReadySeconds}"), "1|")
}
