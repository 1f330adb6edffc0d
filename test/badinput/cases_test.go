package badinput_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/<case>.json from testdata/base-deployment-apply.json")

const (
	lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
	// baseReview is a client-side apply of Deployment web (image
	// nginx:1.16.1), as kube-apiserver 1.37 sent it (copied from
	// webhook/testdata/reviews/deployment-apply.json).
	baseReview = "base-deployment-apply.json"
)

// generators build each case of the corpus from the base review. Cases
// whose review would be larger than 1 MB are generated in memory only
// (see inMemory).
var generators = map[string]func(t *testing.T) []byte{
	"not-json":               func(*testing.T) []byte { return []byte("this is {not JSON\n") },
	"wrong-apiversion":       edit(func(r review) { r["apiVersion"] = "admission.k8s.io/v2" }),
	"no-request":             edit(func(r review) { delete(r, "request") }),
	"object-of-another-kind": edit(func(r review) { r.obj("object")["kind"] = "ConfigMap"; r.obj("object")["apiVersion"] = "v1" }),
	"last-applied-not-json":  edit(func(r review) { r.setLastApplied("{\"apiVersion\":\"apps/v1\",\"kind\":") }),
	"last-applied-other-kind": edit(func(r review) {
		r.editStoredLastApplied(func(la map[string]any) { la["apiVersion"], la["kind"] = "v1", "ConfigMap" })
	}),
	"last-applied-other-name": edit(func(r review) { r.editStoredLastApplied(func(la map[string]any) { meta(la)["name"] = "not-web" }) }),
	"last-applied-1mib": edit(func(r review) {
		r.editLastApplied(func(la map[string]any) { firstContainer(la)["args"] = []any{strings.Repeat("x", 1<<20)} })
	}),
	"env-10000-entries":          edit(func(r review) { r.editBoth(func(o map[string]any) { firstContainer(o)["env"] = envEntries(10000) }) }),
	"env-10000-entries-replaced": edit(replaceEnv(10000)),
	"duplicate-merge-keys":       edit(func(r review) { r.editBoth(func(o map[string]any) { firstContainer(o)["env"] = duplicateEnv() }) }),
	"custom-resource":            edit(customResource),
	"status-only-update":         edit(statusOnly),
	"delete": edit(func(r review) {
		r.req()["operation"] = "DELETE"
		r.req()["object"] = nil
		r.req()["options"] = deleteOptions()
	}),
	"connect":                 edit(connect),
	"object-is-null":          edit(func(r review) { r.req()["object"] = nil }),
	"old-object-missing":      edit(func(r review) { delete(r.req(), "oldObject") }),
	"object-and-old-swapped":  edit(func(r review) { r.req()["object"], r.req()["oldObject"] = r.req()["oldObject"], r.req()["object"] }),
	"scale-to-zero":           edit(scaleToZero),
	"kind-without-group":      edit(func(r review) { r.req()["kind"] = map[string]any{"kind": "Deployment"} }),
	"managed-fields-not-list": edit(func(r review) { r.editBoth(func(o map[string]any) { meta(o)["managedFields"] = "x" }) }),
	"containers-not-list": edit(func(r review) {
		r.editBoth(func(o map[string]any) { podSpec(o)["containers"] = map[string]any{"name": "nginx"} })
	}),
	"last-applied-null-fields": edit(func(r review) {
		r.editLastApplied(func(la map[string]any) { la["spec"] = map[string]any{"replicas": nil, "template": nil} })
	}),
}

// inMemory are the cases too large to keep in testdata (style: no blobs
// over 1 MB).
var inMemory = map[string]bool{"last-applied-1mib": true, "env-10000-entries": true, "env-10000-entries-replaced": true}

// corpus returns the review of a case: from testdata, or generated.
func corpus(t *testing.T, name string) []byte {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	if inMemory[name] {
		return generators[name](t)
	}
	if *update {
		if err := os.WriteFile(path, generators[name](t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (regenerate with -update): %v", path, err)
	}
	return raw
}

// review is a decoded AdmissionReview.
type review map[string]any

func edit(fn func(review)) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join("testdata", baseReview))
		if err != nil {
			t.Fatal(err)
		}
		var r review
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		fn(r)
		out, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return append(out, '\n')
	}
}

func (r review) req() map[string]any { return r["request"].(map[string]any) }

func (r review) obj(which string) map[string]any { return r.req()[which].(map[string]any) }

// editBoth changes object and oldObject, and the last-applied of object
// (the manifest of this apply) the same way.
func (r review) editBoth(fn func(map[string]any)) {
	fn(r.obj("object"))
	fn(r.obj("oldObject"))
	r.editLastApplied(fn)
}

func (r review) setLastApplied(value string) {
	for _, which := range []string{"object", "oldObject"} {
		meta(r.obj(which))["annotations"].(map[string]any)[lastAppliedAnnotation] = value
	}
}

// editLastApplied changes the last-applied of object (this apply's
// manifest).
func (r review) editLastApplied(fn func(map[string]any)) { editLastApplied(r.obj("object"), fn) }

// editStoredLastApplied changes the last-applied of both object and
// oldObject: the stored annotation was already so.
func (r review) editStoredLastApplied(fn func(map[string]any)) {
	editLastApplied(r.obj("object"), fn)
	editLastApplied(r.obj("oldObject"), fn)
}

func editLastApplied(obj map[string]any, fn func(map[string]any)) {
	ann := meta(obj)["annotations"].(map[string]any)
	var la map[string]any
	if err := json.Unmarshal([]byte(ann[lastAppliedAnnotation].(string)), &la); err != nil {
		panic(fmt.Sprintf("the base review's last-applied: %v", err))
	}
	fn(la)
	out, err := json.Marshal(la)
	if err != nil {
		panic(err)
	}
	ann[lastAppliedAnnotation] = string(out)
}

func meta(o map[string]any) map[string]any { return o["metadata"].(map[string]any) }

func podSpec(o map[string]any) map[string]any {
	return o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
}

func firstContainer(o map[string]any) map[string]any {
	return podSpec(o)["containers"].([]any)[0].(map[string]any)
}

func envEntries(n int) []any {
	env := make([]any, n)
	for i := range env {
		env[i] = map[string]any{"name": fmt.Sprintf("VAR_%05d", i), "value": fmt.Sprintf("value-%d", i)}
	}
	return env
}

// replaceEnv gives the stored object n env entries and this apply n
// others: every entry is replaced.
func replaceEnv(n int) func(review) {
	named := func(prefix string) func(map[string]any) {
		return func(o map[string]any) {
			env := make([]any, n)
			for i := range env {
				env[i] = map[string]any{"name": fmt.Sprintf("%s_%05d", prefix, i), "value": "v"}
			}
			firstContainer(o)["env"] = env
		}
	}
	return func(r review) {
		named("OLD")(r.obj("oldObject"))
		editLastApplied(r.obj("oldObject"), named("OLD"))
		named("NEW")(r.obj("object"))
		r.editLastApplied(named("NEW"))
	}
}

// duplicateEnv has LOG_LEVEL twice, which the API server accepts (with a
// warning) and strategic merge patch cannot key.
func duplicateEnv() []any {
	return []any{
		map[string]any{"name": "LOG_LEVEL", "value": "info"},
		map[string]any{"name": "LOG_LEVEL", "value": "debug"},
		map[string]any{"name": "FEATURE_FLAGS", "value": "a,b,c"},
	}
}

// customResource turns the review into one of a Widget (example.com/v1), a
// kind with no Go type: merge uses JSON merge patch. The spec is the
// applied one (a Widget has no server defaults).
func customResource(r review) {
	gvk := map[string]any{"group": "example.com", "version": "v1", "kind": "Widget"}
	gvr := map[string]any{"group": "example.com", "version": "v1", "resource": "widgets"}
	req := r.req()
	req["kind"], req["requestKind"], req["resource"], req["requestResource"] = gvk, gvk, gvr, gvr
	for _, o := range []map[string]any{r.obj("object"), r.obj("oldObject")} {
		o["apiVersion"], o["kind"] = "example.com/v1", "Widget"
		for _, mf := range meta(o)["managedFields"].([]any) {
			mf.(map[string]any)["apiVersion"] = "example.com/v1"
		}
	}
	r.editStoredLastApplied(func(la map[string]any) { la["apiVersion"], la["kind"] = "example.com/v1", "Widget" })
	// No server defaults for a Widget: live is what was applied.
	for _, which := range []string{"object", "oldObject"} {
		o := r.obj(which)
		var la map[string]any
		_ = json.Unmarshal([]byte(meta(o)["annotations"].(map[string]any)[lastAppliedAnnotation].(string)), &la)
		o["spec"] = la["spec"]
		delete(o, "status")
	}
}

// statusOnly is an update of the status subresource: the spec is the
// stored one, only status changes.
func statusOnly(r review) {
	req := r.req()
	req["subResource"] = "status"
	req["options"] = map[string]any{"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl-edit"}
	obj := deepCopy(r.obj("oldObject"))
	obj["status"] = map[string]any{"observedGeneration": 99, "replicas": 7}
	req["object"] = obj
}

func deleteOptions() map[string]any {
	return map[string]any{"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Background"}
}

// connect is a kubectl exec into a pod: operation CONNECT on pods/exec.
func connect(r review) {
	req := r.req()
	req["operation"] = "CONNECT"
	req["kind"] = map[string]any{"group": "", "version": "v1", "kind": "PodExecOptions"}
	req["requestKind"] = req["kind"]
	req["resource"] = map[string]any{"group": "", "version": "v1", "resource": "pods"}
	req["requestResource"] = req["resource"]
	req["subResource"] = "exec"
	req["name"] = "web-5d8f7c9b4-abcde"
	req["object"] = map[string]any{"kind": "PodExecOptions", "apiVersion": "v1", "stdin": true, "tty": true,
		"container": "nginx", "command": []any{"sh"}}
	delete(req, "oldObject")
	req["options"] = nil
}

// scaleToZero is `kubectl scale --replicas=0` of Deployment web as the
// API server sends it: the Scale's spec.replicas is omitempty, so a scale
// to zero has "spec":{}.
func scaleToZero(r review) {
	req := r.req()
	req["subResource"] = "scale"
	req["kind"] = map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"}
	req["object"] = map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{}}
	req["oldObject"] = map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": 3}}
	req["operation"] = "UPDATE"
	req["options"] = map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PatchOptions"}
}

func deepCopy(m map[string]any) map[string]any {
	raw, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}
