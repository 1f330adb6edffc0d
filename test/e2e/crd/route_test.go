package crd_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// timestamp matches the time of a managedFields entry in a message.
const timestamp = `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`

// A route that kubectl patch adds to a Route whose manifest has no routes
// stays through every apply: the orphan warning names the list element,
// spec.routes[name=canary], not the whole list, and its command removes
// exactly that element.
func TestOrphanAtListMapElement(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	installCRD(t, k, "testdata/crd.yaml", `"x-kubernetes-list-map-keys"`)
	framework.ApplyPredicted(t, k, "testdata/web-v1.yaml").MustSucceed(t)
	patch := k.Run(t, "patch", "route/web", "--type=json",
		"-p", `[{"op":"add","path":"/spec/routes","value":[{"name":"canary","backend":"web-v2","weight":10}]}]`).MustSucceed(t)
	framework.WantLines(t, patch.Stdout, "route.example.com/web patched")
	framework.WantLines(t, patch.Stderr)

	apply := framework.ApplyPredicted(t, k, "testdata/web-v2.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "route.example.com/web configured")
	m := framework.WantMatch(t, apply.Stderr,
		regexp.QuoteMeta(`Warning: [orphaned-field] Route `+f.Namespace+`/web: spec.routes[name=canary] ({"backend":"web-v2","name":"canary","weight":10}, set by kubectl-patch at `)+
			timestamp+regexp.QuoteMeta(`) is in neither your manifest nor last-applied, so kubectl apply will never remove it. Remove it with: `)+
			"("+regexp.QuoteMeta(`kubectl patch routes.example.com/web -n `+f.Namespace+` --type=json -p '[{"op":"test","path":"/spec/routes/0/name","value":"canary"},{"op":"remove","path":"/spec/routes/0"}]'`)+")")
	command := m[0][1]

	out := k.RunPrinted(t, command)
	framework.WantLines(t, strings.TrimSpace(out), "route.example.com/web patched")
	framework.WantLines(t, k.JSONPath(t, "route/web", "{.spec}"), `{"host":"web2.example.com","routes":[]}`)
}

// routeDenial is the [imperative-edit] message for one changed field of
// route/api.
func routeDenial(ns, field, arg string) string {
	return fmt.Sprintf("[imperative-edit] Route %s/api: this write by %s (field manager kubectl-patch) changes fields that last-applied owns: %s; "+
		"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, "+
		"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover routes.example.com/api -n %s %s",
		ns, controlplane.AdminUser, field, ns, arg)
}

// Within a list-map, an edit of a field that last-applied owns is denied
// at the field, spec.routes[name=primary].weight, and nothing is written;
// a route added by kubectl patch is nobody's and goes through, and the
// next apply, whose JSON merge patch puts the manifest's list back whole,
// warns that it removes that route.
func TestImperativeEditAtListMapElement(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	installCRD(t, k, "testdata/crd.yaml", `"x-kubernetes-list-map-keys"`)
	framework.ApplyPredicted(t, k, "testdata/api.yaml").MustSucceed(t)

	denied := k.Run(t, "patch", "route/api", "--type=json", "-p", `[{"op":"replace","path":"/spec/routes/0/weight","value":50}]`).MustFail(t)
	framework.WantLines(t, denied.Stderr, "Error from server (Forbidden): "+framework.DeniedPrefix+
		routeDenial(f.Namespace, `spec.routes[name=primary].weight (last-applied 100, now 50)`, `'spec.routes[name=primary].weight'`))
	framework.WantLines(t, k.JSONPath(t, "route/api", "{.spec.routes[0].weight}"), "100")

	added := k.Run(t, "patch", "route/api", "--type=json",
		"-p", `[{"op":"add","path":"/spec/routes/-","value":{"name":"canary","backend":"api-v2","weight":10}}]`).MustSucceed(t)
	framework.WantLines(t, added.Stdout, "route.example.com/api patched")
	framework.WantLines(t, added.Stderr)

	apply := framework.ApplyPredicted(t, k, "testdata/api.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "route.example.com/api configured")
	framework.WantMatch(t, apply.Stderr,
		regexp.QuoteMeta(`Warning: [apply-reverts-drift] Route `+f.Namespace+`/api: this apply removes spec.routes[name=canary], `+
			`discarding {"backend":"api-v2","name":"canary","weight":10} set by kubectl-patch at `)+timestamp+
			regexp.QuoteMeta(` since the last apply. To keep that value, put it in your manifest before you apply; `+
				`see every drifted field with: kubectl hygiene explain routes.example.com/api -n `+f.Namespace))
	framework.WantLines(t, k.JSONPath(t, "route/api", "{.spec.routes[*].name}"), "primary")
}
