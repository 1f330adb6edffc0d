package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// LeftByReapply keeps the facts at fields that kubectl's patch for an
// apply of old's own last-applied leaves alone, and drops those the patch
// sets: with a strategic merge patch (a Deployment) and with a JSON merge
// patch (a custom resource).
func TestLeftByReapply(t *testing.T) {
	tests := map[string]struct {
		old   string
		paths []string
		want  []string
	}{
		"a Deployment whose image a webhook pinned to a digest, scaled by a person": {
			old: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}'
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        image: nginx:1@sha256:aaaa
`,
			paths: []string{"spec.template.spec.containers[name=web].image", "spec.replicas"},
			want:  []string{"spec.replicas"},
		},
		"a custom resource whose size drifted, its color edited": {
			old: `
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1,"color":"red"}}'
spec:
  size: 3
  color: red
`,
			paths: []string{"spec.size", "spec.color"},
			want:  []string{"spec.color"},
		},
		"an object without last-applied: no write can be told from an apply": {
			old: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
`,
			paths: []string{"spec.replicas"},
			want:  []string{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			facts := []FieldFact{}
			for _, p := range tc.paths {
				facts = append(facts, FieldFact{Path: mustPath(t, p)})
			}
			got := []string{}
			for _, f := range NewAnalyzer().LeftByReapply(mustObject(t, tc.old), facts) {
				got = append(got, f.Path.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("facts left (-want +got):\n%s", diff)
			}
		})
	}
}
