package webhook

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// A write that changes only last-applied (and what the server maintains)
// is a hand-over of fields; any other change is not.
func TestOnlyLastAppliedChanged(t *testing.T) {
	const old = `{"apiVersion":"v1","kind":"ConfigMap",
	  "metadata":{"name":"c","resourceVersion":"1","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"a"}},
	  "data":{"k":"v"}}`
	tests := map[string]struct {
		new  string
		want bool
	}{
		"last-applied and bookkeeping": {want: true, new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","resourceVersion":"2","generation":2,"managedFields":[{}],"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{}}","team":"a"}},
		  "data":{"k":"v"},"status":{"x":1}}`},
		"last-applied removed": {want: true, new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","annotations":{"team":"a"}},"data":{"k":"v"}}`},
		"another annotation": {new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"b"}},"data":{"k":"v"}}`},
		"annotations gone": {new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c"},"data":{"k":"v"}}`},
		"a label": {new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","labels":{"a":"b"},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"a"}},"data":{"k":"v"}}`},
		"data": {new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"a"}},"data":{"k":"w"}}`},
		"data dropped": {new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"a"}}}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := onlyLastAppliedChanged(object(t, old), object(t, tc.new)); got != tc.want {
				t.Errorf("onlyLastAppliedChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}
