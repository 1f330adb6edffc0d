package webhook

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The benchmark reviews of testdata/bench are derived from the captured
// reviews of testdata/reviews by the variants below; `go test -run
// TestBenchReviews -update-bench ./webhook/` rewrites them. Every variant
// changes the pod template (and the last-applied annotation and the
// managedFields that describe it) the same way in the request's objects and
// in the cluster snapshot, so that what the capture was (an apply, an edit,
// an undo restoring a revision) stays what it is.

// benchSource is one benchmark review: a captured review, and how to make
// it into the size benchmarked.
type benchSource struct {
	capture string
	variant func(review, cluster map[string]any)
}

// benchSources name the benchmark reviews as <size>-<classification>.
var benchSources = map[string]benchSource{
	"small-apply":   {capture: "deployment-apply", variant: shrink},
	"small-edit":    {capture: "deployment-edit", variant: shrink},
	"small-undo":    {capture: "deployment-rollout-undo", variant: shrink},
	"small-scale":   {capture: "deployment-scale", variant: shrink},
	"typical-apply": {capture: "deployment-apply"},
	"typical-edit":  {capture: "deployment-edit"},
	"typical-undo":  {capture: "deployment-rollout-undo"},
	"typical-scale": {capture: "deployment-scale"},
	"large-apply":   {capture: "statefulset-apply-after-undo", variant: grow},
	"large-edit":    {capture: "statefulset-apply-after-undo", variant: func(r, c map[string]any) { grow(r, c); asEdit(r, c) }},
	"large-undo":    {capture: "statefulset-rollout-undo", variant: grow},
	"large-scale":   {capture: "statefulset-scale", variant: grow},
	"crd-apply":     {capture: "deployment-apply", variant: asCustomResource},
	"crd-edit":      {capture: "deployment-edit", variant: asCustomResource},
	"crd-scale":     {capture: "deployment-scale", variant: asCustomResource},
}

// buildBenchReview returns the review and the cluster snapshot of a
// benchmark case, as JSON.
func buildBenchReview(src benchSource) (review, cluster []byte, err error) {
	dir := filepath.Join("testdata", "reviews")
	r, err := readJSONMap(filepath.Join(dir, src.capture+".json"))
	if err != nil {
		return nil, nil, err
	}
	c, err := readJSONMap(filepath.Join(dir, src.capture+".cluster.json"))
	if err != nil {
		return nil, nil, err
	}
	if src.variant != nil {
		src.variant(r, c)
	}
	if review, err = json.Marshal(r); err != nil {
		return nil, nil, err
	}
	cluster, err = json.Marshal(c)
	return review, cluster, err
}

func readJSONMap(path string) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return m, nil
}

// eachObject calls f on the request's objects and on every object of the
// cluster snapshot.
func eachObject(review, cluster map[string]any, f func(obj map[string]any)) {
	req := review["request"].(map[string]any)
	for _, k := range []string{"object", "oldObject"} {
		if obj, ok := req[k].(map[string]any); ok {
			f(obj)
		}
	}
	items, _ := cluster["items"].([]any)
	for _, item := range items {
		f(item.(map[string]any))
	}
}

// eachTemplate calls pod on every pod spec of obj (spec.template.spec, and
// data.spec.template.spec of a ControllerRevision), then on those of its
// last-applied annotation, and fields on its managedFields' field sets.
func eachTemplate(obj map[string]any, pod func(spec map[string]any), fields func(set map[string]any)) {
	for _, root := range []any{obj["spec"], dig(obj, "data", "spec")} {
		if spec, ok := dig(root, "template", "spec").(map[string]any); ok {
			pod(spec)
		}
	}
	ann, _ := dig(obj, "metadata", "annotations").(map[string]any)
	if la, ok := ann[lastAppliedAnnotation].(string); ok {
		var applied map[string]any
		if json.Unmarshal([]byte(la), &applied) == nil {
			eachTemplate(applied, pod, func(map[string]any) {})
			raw, _ := json.Marshal(applied)
			ann[lastAppliedAnnotation] = string(raw) + "\n"
		}
	}
	entries, _ := dig(obj, "metadata", "managedFields").([]any)
	for _, e := range entries {
		if set, ok := dig(e, "fieldsV1", "f:spec", "f:template", "f:spec").(map[string]any); ok {
			fields(set)
		}
	}
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// shrink makes the small Deployment: only the first container, without
// volumes (about 2 KB of object without managedFields).
func shrink(review, cluster map[string]any) {
	eachObject(review, cluster, func(obj map[string]any) {
		eachTemplate(obj, func(spec map[string]any) {
			containers := spec["containers"].([]any)
			first := containers[0].(map[string]any)
			delete(first, "volumeMounts")
			spec["containers"] = containers[:1]
			delete(spec, "volumes")
		}, func(set map[string]any) {
			delete(set, "f:volumes")
			containers, _ := set["f:containers"].(map[string]any)
			for k, c := range containers {
				if k != `k:{"name":"nginx"}` {
					delete(containers, k)
				} else if c, ok := c.(map[string]any); ok {
					delete(c, "f:volumeMounts")
				}
			}
		})
	})
}

// growSidecars and growEnv size the large StatefulSet: about 100 KB of
// review.
const (
	growSidecars = 8
	growEnv      = 16
)

// grow makes the large StatefulSet: growSidecars sidecars with growEnv
// variables, ports, probes, resources and a volume each, owned by the
// manager that owns the first container (the applier), and in last-applied.
func grow(review, cluster map[string]any) {
	eachObject(review, cluster, func(obj map[string]any) {
		eachTemplate(obj, func(spec map[string]any) {
			containers := spec["containers"].([]any)
			volumes, _ := spec["volumes"].([]any)
			for i := range growSidecars {
				containers = append(containers, sidecar(i))
				volumes = append(volumes, map[string]any{"name": fmt.Sprintf("config-%02d", i),
					"configMap": map[string]any{"name": fmt.Sprintf("sidecar-%02d", i), "defaultMode": float64(420)}})
			}
			spec["containers"], spec["volumes"] = containers, volumes
		}, func(set map[string]any) {
			containers, _ := set["f:containers"].(map[string]any)
			if first, ok := containers[`k:{"name":"nginx"}`].(map[string]any); !ok || first["."] == nil {
				return
			}
			volumes := map[string]any{".": map[string]any{}}
			for i := range growSidecars {
				c := sidecar(i)
				containers[fmt.Sprintf(`k:{"name":%q}`, c["name"])] = withDot(fieldSet(c))
				volumes[fmt.Sprintf(`k:{"name":"config-%02d"}`, i)] = map[string]any{".": map[string]any{},
					"f:name": map[string]any{}, "f:configMap": map[string]any{"f:name": map[string]any{}, "f:defaultMode": map[string]any{}}}
			}
			set["f:volumes"] = volumes
		})
	})
}

func sidecar(i int) map[string]any {
	env := make([]any, 0, growEnv)
	for j := range growEnv {
		env = append(env, map[string]any{"name": fmt.Sprintf("SIDECAR_%02d_SETTING_%02d", i, j), "value": fmt.Sprintf("value-%02d-%02d-of-a-realistic-length", i, j)})
	}
	probe := func(path string) map[string]any {
		return map[string]any{"httpGet": map[string]any{"path": path, "port": float64(9000 + i), "scheme": "HTTP"},
			"initialDelaySeconds": float64(5), "timeoutSeconds": float64(1), "periodSeconds": float64(10), "successThreshold": float64(1), "failureThreshold": float64(3)}
	}
	return map[string]any{
		"name":  fmt.Sprintf("sidecar-%02d", i),
		"image": fmt.Sprintf("registry.example.com/platform/sidecar-%02d:1.4.%d", i, i),
		"args":  []any{"--config=/etc/sidecar/config.yaml", "--log-level=info"},
		"ports": []any{map[string]any{"name": fmt.Sprintf("metrics-%02d", i), "containerPort": float64(9000 + i), "protocol": "TCP"}},
		"env":   env,
		"resources": map[string]any{"limits": map[string]any{"cpu": "200m", "memory": "128Mi"},
			"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}},
		"volumeMounts":             []any{map[string]any{"name": fmt.Sprintf("config-%02d", i), "mountPath": "/etc/sidecar", "readOnly": true}},
		"livenessProbe":            probe("/healthz"),
		"readinessProbe":           probe("/readyz"),
		"terminationMessagePath":   "/dev/termination-log",
		"terminationMessagePolicy": "File",
		"imagePullPolicy":          "IfNotPresent",
	}
}

// fieldSet returns the managedFields form (FieldsV1) of a value's fields:
// list items by name (ports by containerPort and protocol).
func fieldSet(v any) map[string]any {
	set := map[string]any{}
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			set["f:"+k] = fieldSet(child)
		}
	case []any:
		if len(v) == 0 {
			return set
		}
		if _, ok := v[0].(map[string]any); !ok {
			return set // an atomic list
		}
		set["."] = map[string]any{}
		for _, item := range v {
			m := item.(map[string]any)
			key := fmt.Sprintf(`k:{"name":%q}`, m["name"])
			if port, ok := m["containerPort"]; ok {
				key = fmt.Sprintf(`k:{"containerPort":%v,"protocol":%q}`, port, m["protocol"])
			}
			set[key] = withDot(fieldSet(m))
		}
	}
	return set
}

func withDot(set map[string]any) map[string]any {
	out := maps.Clone(set)
	out["."] = map[string]any{}
	return out
}

// asEdit makes a kubectl edit of the review's write: the old object as
// stored, with the first container's image changed by kubectl-edit.
func asEdit(review, _ map[string]any) {
	req := review["request"].(map[string]any)
	req["options"].(map[string]any)["fieldManager"] = "kubectl-edit"
	old := req["oldObject"].(map[string]any)
	raw, _ := json.Marshal(old)
	var edited map[string]any
	_ = json.Unmarshal(raw, &edited)
	first := dig(edited, "spec", "template", "spec").(map[string]any)["containers"].([]any)[0].(map[string]any)
	first["image"] = "nginx:edited"
	entries := dig(edited, "metadata", "managedFields").([]any)
	for _, e := range entries {
		if c, ok := dig(e, "fieldsV1", "f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"nginx"}`).(map[string]any); ok {
			delete(c, "f:image")
		}
	}
	edit := map[string]any{"manager": "kubectl-edit", "operation": "Update", "apiVersion": "apps/v1", "time": "2026-11-22T02:20:00Z",
		"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{
			"f:containers": map[string]any{`k:{"name":"nginx"}`: map[string]any{"f:image": map[string]any{}}}}}}}}
	edited["metadata"].(map[string]any)["managedFields"] = append(entries, edit)
	req["object"] = edited
}

// asCustomResource makes the objects of a Deployment review into
// widgets.example.com/v1 objects of kind Widget: a custom resource without
// a Go type, merged with JSON merge patch and deduced field sets. The
// cluster gets the Widget CRD, whose /scale sets spec.replicas.
func asCustomResource(review, cluster map[string]any) {
	req := review["request"].(map[string]any)
	for _, k := range []string{"kind", "requestKind"} {
		if gvk, ok := req[k].(map[string]any); ok && gvk["kind"] == "Deployment" {
			gvk["group"], gvk["version"], gvk["kind"] = "example.com", "v1", "Widget"
		}
	}
	for _, k := range []string{"resource", "requestResource"} {
		if gvr, ok := req[k].(map[string]any); ok {
			gvr["group"], gvr["version"], gvr["resource"] = "example.com", "v1", "widgets"
		}
	}
	eachObject(review, cluster, func(obj map[string]any) {
		asWidget(obj)
		ann, _ := dig(obj, "metadata", "annotations").(map[string]any)
		if la, ok := ann[lastAppliedAnnotation].(string); ok {
			ann[lastAppliedAnnotation] = strings.Replace(strings.Replace(la,
				`"apiVersion":"apps/v1"`, `"apiVersion":"example.com/v1"`, 1), `"kind":"Deployment"`, `"kind":"Widget"`, 1)
		}
	})
	items, _ := cluster["items"].([]any)
	cluster["items"] = append(items, widgetsCRD())
}

// widgetsCRD is the CRD of widgets.example.com with the scale
// subresource of a Deployment's.
func widgetsCRD() map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"scale": map[string]any{"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}}},
	}
}

func asWidget(obj map[string]any) {
	if obj["kind"] != "Deployment" {
		return
	}
	obj["apiVersion"], obj["kind"] = "example.com/v1", "Widget"
	entries, _ := dig(obj, "metadata", "managedFields").([]any)
	for _, e := range entries {
		if e, ok := e.(map[string]any); ok && e["apiVersion"] == "apps/v1" {
			e["apiVersion"] = "example.com/v1"
		}
	}
}

// TestBenchReviews checks that testdata/bench holds what the variants make
// of the captures; -update-bench rewrites it.
func TestBenchReviews(t *testing.T) {
	for name, src := range benchSources {
		t.Run(name, func(t *testing.T) {
			review, cluster, err := buildBenchReview(src)
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range map[string][]byte{benchPath(name, ".json"): review, benchPath(name, ".cluster.json"): cluster} {
				if *updateBench {
					if err := os.WriteFile(path, want, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				got, err := os.ReadFile(path)
				if err != nil || string(got) != string(want) {
					t.Errorf("%s is not what the variant makes of %s (err %v); run with -update-bench", path, src.capture, err)
				}
			}
		})
	}
}

func benchPath(name, ext string) string { return filepath.Join("testdata", "bench", name+ext) }
