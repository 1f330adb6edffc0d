package merge

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// handOverManifest is the manifest that the rows of
// TestHandOverThroughLastApplied take fields out of: the last-applied of
// their old object, which the object also has live.
const handOverManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {team: a, tier: web}
  annotations: {owner: x}
spec:
  replicas: 2
  revisionHistoryLimit: 10
  progressDeadlineSeconds: 300
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: "nginx:1.25"
        env: [{name: A, value: "1"}]
        resources: {limits: {cpu: "1", memory: 1Gi}, requests: {cpu: 100m}}
      - {name: sidecar, image: "envoy:1.30"}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 50%}
`

// kubectl apply edit-last-applied and set-last-applied hand over the
// fields they take out of last-applied and that stay set; merge builds
// the record to write: the topmost element that left whole, never the
// workload's state, a server default or a field already recorded, nothing
// when the field is gone too, and the earlier record kept.
func TestHandOverThroughLastApplied(t *testing.T) {
	tests := map[string]struct {
		drop   []string // paths, dot-separated, taken out of last-applied
		empty  []string // and lists there emptied
		unset  []string // and out of the object
		record string   // the object's record before the write
		huge   bool     // annotations near the API server's limit
		near   bool     // annotations just under TooLargeThreshold
		want   *HandoverRecord
	}{
		"a label":                                 {drop: []string{"metadata.labels.team"}, want: &HandoverRecord{Value: `["metadata.labels.team"]`, Paths: []string{"metadata.labels.team"}, Fits: true}},
		"a label and an annotation":               {drop: []string{"metadata.labels.team", "metadata.annotations.owner"}, want: &HandoverRecord{Value: `["metadata.annotations.owner","metadata.labels.team"]`, Paths: []string{"metadata.annotations.owner", "metadata.labels.team"}, Fits: true}},
		"a label that is gone too":                {drop: []string{"metadata.labels.team"}, unset: []string{"metadata.labels.team"}},
		"the replicas":                            {drop: []string{"spec.replicas"}},
		"a server default":                        {drop: []string{"spec.revisionHistoryLimit"}},
		"a value no server defaults":              {drop: []string{"spec.progressDeadlineSeconds"}, want: &HandoverRecord{Value: `["spec.progressDeadlineSeconds"]`, Paths: []string{"spec.progressDeadlineSeconds"}, Fits: true}},
		"already recorded":                        {drop: []string{"metadata.labels.team"}, record: `["metadata.labels.team"]`},
		"beside an earlier hand-over":             {drop: []string{"metadata.labels.team"}, record: `["metadata.annotations.owner"]`, want: &HandoverRecord{Value: `["metadata.annotations.owner","metadata.labels.team"]`, Paths: []string{"metadata.labels.team"}, Fits: true}},
		"a record that is no list":                {drop: []string{"metadata.labels.team"}, record: "team"},
		"too large to write":                      {drop: []string{"metadata.labels.team"}, huge: true, want: &HandoverRecord{Value: `["metadata.labels.team"]`, Paths: []string{"metadata.labels.team"}, Fits: false}},
		"nothing taken out":                       {},
		"over last-applied-too-large's threshold": {drop: []string{"metadata.labels.team"}, near: true, want: &HandoverRecord{Value: `["metadata.labels.team"]`, Paths: []string{"metadata.labels.team"}, Fits: false}},
		"a container's image": {drop: []string{"spec.template.spec.containers.0.image"}, want: &HandoverRecord{
			Value: `["spec.template.spec.containers[name=app].image"]`, Paths: []string{"spec.template.spec.containers[name=app].image"}, Fits: true}},
		"a whole container": {drop: []string{"spec.template.spec.containers.1"}, want: &HandoverRecord{
			Value: `["spec.template.spec.containers[name=sidecar]"]`, Paths: []string{"spec.template.spec.containers[name=sidecar]"}, Fits: true}},
		// A map or struct that left whole is handed over whole, as
		// kubectl hygiene handover records the path it is given: a key
		// added to it later is the new writer's too.
		"a container's whole resources": {drop: []string{"spec.template.spec.containers.0.resources"}, want: &HandoverRecord{
			Value: `["spec.template.spec.containers[name=app].resources"]`, Paths: []string{"spec.template.spec.containers[name=app].resources"}, Fits: true}},
		"a container's limits": {drop: []string{"spec.template.spec.containers.0.resources.limits"}, want: &HandoverRecord{
			Value: `["spec.template.spec.containers[name=app].resources.limits"]`, Paths: []string{"spec.template.spec.containers[name=app].resources.limits"}, Fits: true}},
		"one of the limits": {drop: []string{"spec.template.spec.containers.0.resources.limits.cpu"}, want: &HandoverRecord{
			Value: `["spec.template.spec.containers[name=app].resources.limits.cpu"]`, Paths: []string{"spec.template.spec.containers[name=app].resources.limits.cpu"}, Fits: true}},
		// Never a map of labels or annotations whole: many writers add
		// keys to them.
		"every label": {drop: []string{"metadata.labels"}, want: &HandoverRecord{
			Value: `["metadata.labels.team","metadata.labels.tier"]`, Paths: []string{"metadata.labels.team", "metadata.labels.tier"}, Fits: true}},
		"every label of the pod template": {drop: []string{"spec.template.metadata.labels"}, want: &HandoverRecord{
			Value: `["spec.template.metadata.labels.app"]`, Paths: []string{"spec.template.metadata.labels.app"}, Fits: true}},
		// Never over a server default: the strategy's type stays
		// kubectl apply's (the server puts it back), its rollingUpdate
		// goes whole.
		"the strategy, whose type is the server's default": {drop: []string{"spec.strategy"}, want: &HandoverRecord{
			Value: `["spec.strategy.rollingUpdate"]`, Paths: []string{"spec.strategy.rollingUpdate"}, Fits: true}},
		// A list that last-applied keeps, empty, did not leave whole.
		"every env var, the list left empty": {empty: []string{"spec.template.spec.containers.0.env"}, want: &HandoverRecord{
			Value: `["spec.template.spec.containers[name=app].env[name=A]"]`, Paths: []string{"spec.template.spec.containers[name=app].env[name=A]"}, Fits: true}},
		"the pod template's whole metadata": {drop: []string{"spec.template.metadata"}, want: &HandoverRecord{
			Value: `["spec.template.metadata.labels.app"]`, Paths: []string{"spec.template.metadata.labels.app"}, Fits: true}},
		// Below the top level (spec stays whole in last-applied).
		"the whole template": {drop: []string{"spec.template"}, want: &HandoverRecord{
			Value: `["spec.template"]`, Paths: []string{"spec.template"}, Fits: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			manifest := map[string]any{}
			if err := yaml.Unmarshal([]byte(handOverManifest), &manifest); err != nil {
				t.Fatal(err)
			}
			handedOver := manifestWithout(t, manifest, tc.drop)
			for _, p := range tc.empty {
				handedOver = emptied(handedOver, strings.Split(p, "."))
			}
			old := objectWithLastApplied(t, manifest, manifest)
			new := objectWithLastApplied(t, manifestWithout(t, manifest, tc.unset), handedOver)
			for _, obj := range []*unstructured.Unstructured{old, new} {
				annotations := obj.GetAnnotations()
				if tc.record != "" {
					annotations[HandedOverAnnotation] = tc.record
				}
				if tc.huge {
					annotations["big"] = strings.Repeat("x", AnnotationsLimit-AnnotationsSize(obj)-30)
				}
				if tc.near {
					annotations["big"] = strings.Repeat("x", TooLargeThreshold-AnnotationsSize(new)-10)
				}
				obj.SetAnnotations(annotations)
			}
			got := NewAnalyzer().HandOverThroughLastApplied(old, new)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("HandOverThroughLastApplied (-want +got):\n%s", diff)
			}
		})
	}
}

// manifestWithout returns a copy of m without the fields at paths (dot-
// separated; a number is a list index).
func manifestWithout(t *testing.T, m map[string]any, paths []string) map[string]any {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		out = without(out, strings.Split(p, ".")).(map[string]any)
	}
	return out
}

// without returns v without the field at path.
func without(v any, path []string) any {
	switch c := v.(type) {
	case map[string]any:
		if len(path) == 1 {
			delete(c, path[0])
			return c
		}
		c[path[0]] = without(c[path[0]], path[1:])
		return c
	case []any:
		n, _ := strconv.Atoi(path[0])
		if len(path) == 1 {
			return append(append([]any{}, c[:n]...), c[n+1:]...)
		}
		c[n] = without(c[n], path[1:])
		return c
	}
	return v
}

// objectWithLastApplied is obj as stored, with la as its last-applied.
func objectWithLastApplied(t *testing.T, obj, la map[string]any) *unstructured.Unstructured {
	t.Helper()
	raw, err := json.Marshal(la)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	b, _ := json.Marshal(obj)
	if err := json.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[LastAppliedAnnotation] = string(raw)
	u.SetAnnotations(annotations)
	return u
}

// A Secret's key handed over from stringData, where its manifest wrote it:
// the server stores it in data, where the record names it (and where a
// person's kubectl patch would set it).
func TestHandOverThroughLastAppliedOfASecretsStringData(t *testing.T) {
	const live = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"ns"},"type":"Opaque","data":{"k":"dg==","keep":"dg=="}}`
	old, new := &unstructured.Unstructured{}, &unstructured.Unstructured{}
	for _, u := range []*unstructured.Unstructured{old, new} {
		if err := u.UnmarshalJSON([]byte(live)); err != nil {
			t.Fatal(err)
		}
	}
	old.SetAnnotations(map[string]string{LastAppliedAnnotation: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"ns"},"stringData":{"k":"v","keep":"v"}}`})
	new.SetAnnotations(map[string]string{LastAppliedAnnotation: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"ns"},"stringData":{"keep":"v"}}`})
	got := NewAnalyzer().HandOverThroughLastApplied(old, new)
	want := &HandoverRecord{Value: `["data.k"]`, Paths: []string{"data.k"}, Fits: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HandOverThroughLastApplied (-want +got):\n%s", diff)
	}
}

// kubectl apply set-last-applied of a manifest without the empty
// annotations: {} that last-applied had (captured, webhook/testdata/reviews
// deployment-set-last-applied): the empty map set nothing, and handing
// it over would hand over every annotation a writer puts in it later.
func TestHandOverThroughLastAppliedOfAnEmptyMapIsNone(t *testing.T) {
	const live = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns","annotations":{"deployment.kubernetes.io/revision":"1"}},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.25"}]}}}}`
	old, new := &unstructured.Unstructured{}, &unstructured.Unstructured{}
	for i, u := range []*unstructured.Unstructured{old, new} {
		if err := u.UnmarshalJSON([]byte(live)); err != nil {
			t.Fatal(err)
		}
		la := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"ns"}}`
		if i == 1 {
			la = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns"}}`
		}
		annotations := u.GetAnnotations()
		annotations[LastAppliedAnnotation] = la
		u.SetAnnotations(annotations)
	}
	if got := NewAnalyzer().HandOverThroughLastApplied(old, new); got != nil {
		t.Errorf("HandOverThroughLastApplied = %+v, want nil", got)
	}
}

// emptied returns m with the list at path (dot-separated; a number is a
// list index) made empty.
func emptied(m map[string]any, path []string) map[string]any {
	var v any = m
	for _, k := range path[:len(path)-1] {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			n, _ := strconv.Atoi(k)
			v = c[n]
		}
	}
	v.(map[string]any)[path[len(path)-1]] = []any{}
	return m
}
