package crd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// A CRD changed while the server runs is used without a restart. The
// server first reads the CRD without spec.mirrors (an edit inside
// spec.routes is denied at its element); once spec.mirrors is a list-map
// in the CRD, an edit of a mirror's weight is denied at the element,
// spec.mirrors[name=a].weight. A server still on the old schema finds
// that the manifest does not fit it and names the whole list,
// spec.mirrors; the server reads the changed document within its refresh
// interval (10 s).
func TestChangedSchemaIsUsedWithoutRestart(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	installCRD(t, k, "testdata/crd.yaml", `"x-kubernetes-list-map-keys"`)
	framework.ApplyPredicted(t, k, "testdata/api.yaml").MustSucceed(t)
	denied := k.Run(t, "patch", "route/api", "--type=json", "-p", `[{"op":"replace","path":"/spec/routes/0/weight","value":50}]`).MustFail(t)
	framework.WantLines(t, denied.Stderr, "Error from server (Forbidden): "+framework.DeniedPrefix+
		routeDenial(f.Namespace, `spec.routes[name=primary].weight (last-applied 100, now 50)`, `'spec.routes[name=primary].weight'`))

	installCRD(t, k, "testdata/crd-v2.yaml", `"mirrors"`)
	changed := time.Now()
	framework.ApplyPredicted(t, k, "testdata/mirror.yaml").MustSucceed(t)

	want := "Error from server (Forbidden): " + framework.DeniedPrefix +
		strings.ReplaceAll(routeDenial(f.Namespace, `spec.mirrors[name=a].weight (last-applied 1, now 2)`, `'spec.mirrors[name=a].weight'`), "routes.example.com/api", "routes.example.com/mirror")
	want = strings.Replace(want, "Route "+f.Namespace+"/api:", "Route "+f.Namespace+"/mirror:", 1)
	var last string
	framework.Eventually(t, time.Minute, "the denial to name spec.mirrors[name=a].weight", func(context.Context) (bool, error) {
		res := k.Run(t, "patch", "route/mirror", "--type=json", "-p", `[{"op":"replace","path":"/spec/mirrors/0/weight","value":2}]`)
		if res.ExitCode == 0 {
			t.Fatalf("the edit of an owned field went through:\n%s", res.Stdout)
		}
		last = strings.TrimSpace(res.Stderr)
		return last == want, nil
	})
	framework.WantLines(t, last, want)
	t.Logf("the server used the changed schema %v after the CRD changed", time.Since(changed).Round(time.Second))
	framework.WantLines(t, k.JSONPath(t, "route/mirror", "{.spec.mirrors[0].weight}"), "1")
}
