package webhook_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Seed 002's kubectl scale, done with kubectl hygiene handover: the scale
// of replicas that last-applied owns is denied; after the hand-over it
// passes, and the next apply of the manifest without replicas leaves the
// count alone.
func TestHandoverLetsTheNewWriterKeepTheField(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	k.Run(t, "scale", "deployment/web", "--replicas=5").MustFail(t)

	dry := f.Hygiene(t, "handover", "deployment/web", "spec.replicas", "-n", f.Namespace, "--dry-run").MustSucceed(t)
	framework.WantLines(t, dry.Stdout,
		"Deployment "+f.Namespace+"/web: last-applied no longer has spec.replicas (server dry run: nothing stored)",
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.",
		"Drop them from your manifest too: an apply of a manifest that sets them takes them back.")
	asJSON := f.Hygiene(t, "handover", "deployment/web", "spec.replicas", "-n", f.Namespace, "--dry-run", "-o", "json", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	want := `{"object":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"` + f.Namespace + `","name":"web"},"handedOver":["spec.replicas"],"dryRun":true,"manifestStillSets":["spec.replicas"]}`
	if got := compactJSON(t, asJSON.Stdout); got != want {
		t.Errorf("-o json:\n got %s\nwant %s", got, want)
	}
	if la := k.JSONPath(t, "deployment/web", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`); !strings.Contains(la, `"replicas":3`) {
		t.Fatalf("the dry run wrote last-applied: %s", la)
	}

	res := f.Hygiene(t, "handover", "deployment/web", "spec.replicas", "-n", f.Namespace, "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	framework.WantLines(t, res.Stdout,
		"Deployment "+f.Namespace+"/web: last-applied no longer has spec.replicas",
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.",
		"testdata/deployment-v1.yaml still sets spec.replicas: drop it before the next apply, or that apply takes it back.")
	framework.WantLines(t, res.Stderr)

	scale := k.Run(t, "scale", "deployment/web", "--replicas=5").MustSucceed(t)
	framework.WantLines(t, scale.Stdout, "deployment.apps/web scaled")
	framework.WantLines(t, scale.Stderr)

	manifest, err := os.ReadFile("testdata/deployment-v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	withoutReplicas := framework.WriteFile(t, "web.yaml", strings.Replace(string(manifest), "  replicas: 3\n", "", 1), 0o644)
	apply := k.Run(t, "apply", "-f", withoutReplicas).MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web unchanged")
	framework.WantLines(t, apply.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.replicas}"), "5")
}

// A path that last-applied does not have writes nothing and says so.
func TestHandoverOfAFieldLastAppliedLacksWritesNothing(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	before := k.JSONPath(t, "deployment/web", "{.metadata.resourceVersion}")
	res := f.Hygiene(t, "handover", "deployment/web", "spec.paused", "-n", f.Namespace).MustFail(t)
	framework.WantLines(t, res.Stderr, "error: Deployment "+f.Namespace+"/web: last-applied has no spec.paused; nothing written")
	if after := k.JSONPath(t, "deployment/web", "{.metadata.resourceVersion}"); after != before {
		t.Errorf("resourceVersion %s → %s: the refused hand-over wrote", before, after)
	}
}

// compactJSON is s without insignificant white space.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return b.String()
}
