package crd_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// blob is a Blob named name whose spec is the JSON value spec.
func blob(name, spec string) string {
	return `{"apiVersion":"example.com/v1","kind":"Blob","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

// A custom resource whose spec is not an object (a string or a list, which
// a CRD without a type for spec allows) passes the chart's match
// conditions, which read spec.template, under failurePolicy Fail: kubectl
// apply, kubectl patch and writes without a field manager (a client-go
// update, an operator's) go through, of an applied object and of one never
// applied, and so does a change of spec to an object with a template and
// back (the old object's spec is then not an object). A match condition
// that fails to evaluate would deny such writes.
func TestSpecThatIsNotAnObjectPassesTheMatchConditions(t *testing.T) {
	tests := map[string]struct {
		// spec and changed are JSON, printed is spec as kubectl's
		// jsonpath prints it.
		spec, changed, printed string
	}{
		"a string": {spec: `"one"`, changed: `"two"`, printed: `one`},
		"a list":   {spec: `["one"]`, changed: `["one","two"]`, printed: `["one"]`},
		"a number": {spec: `1`, changed: `2`, printed: `1`},
	}
	framework.Reconfigure(t, "failurePolicy=Fail",
		"extraKinds[3].group=example.com", "extraKinds[3].version=v1", "extraKinds[3].resource=blobs")
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/blob-crd.yaml").MustSucceed(t)
	k.Run(t, "wait", "--for=condition=Established", "crd/blobs.example.com", "--timeout=60s").MustSucceed(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			created := k.RunWithInput(t, blob("applied", tc.spec), "apply", "-f", "-").MustSucceed(t)
			framework.WantLines(t, created.Stdout, "blob.example.com/applied created")
			applied := k.RunWithInput(t, blob("applied", tc.changed), "apply", "-f", "-").MustSucceed(t)
			framework.WantLines(t, applied.Stdout, "blob.example.com/applied configured")
			framework.WantLines(t, applied.Stderr)
			wantPatched(t, k.Run(t, "patch", "blob/applied", "--type=merge", "-p", `{"metadata":{"labels":{"by":"patch"}}}`), "applied")
			// No field manager: what a client-go update sends.
			wantPatched(t, k.Run(t, "patch", "blob/applied", "--type=merge", "--field-manager=", "-p", `{"metadata":{"labels":{"by":"client"}}}`), "applied")

			// Never applied: no last-applied in the old or the new object.
			k.RunWithInput(t, blob("created", tc.spec), "create", "-f", "-").MustSucceed(t)
			// The label keeps the write with a template from looking like
			// kubectl rollout undo (a write of spec.template only).
			for _, patch := range []string{`{"spec":` + tc.changed + `}`, `{"metadata":{"labels":{"step":"template"}},"spec":{"template":{"a":1}}}`, `{"spec":` + tc.spec + `}`} {
				wantPatched(t, k.Run(t, "patch", "blob/created", "--type=merge", "--field-manager=", "-p", patch), "created")
			}
			framework.WantLines(t, k.JSONPath(t, "blob/created", "{.spec}"), tc.printed)
			k.Run(t, "delete", "blob/applied", "blob/created").MustSucceed(t)
		})
	}
}

// wantPatched checks that kubectl patch of blob/name went through without
// a word.
func wantPatched(t *testing.T, res framework.Result, name string) {
	t.Helper()
	if res.ExitCode != 0 {
		t.Errorf("kubectl %s: exit %d", strings.Join(res.Args, " "), res.ExitCode)
	}
	framework.WantLines(t, res.Stdout, "blob.example.com/"+name+" patched")
	framework.WantLines(t, res.Stderr)
}
