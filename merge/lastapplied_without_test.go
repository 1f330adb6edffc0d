package merge

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestLastAppliedWithout(t *testing.T) {
	const web = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"team":"shop"},"name":"web","namespace":"shop"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"env":[{"name":"DEBUG","value":"1"}],"image":"nginx:1.27","name":"web"}]}}}}`
	const secret = `{"apiVersion":"v1","data":{"token":"dG9rZW4="},"kind":"Secret","metadata":{"name":"creds","namespace":"shop"},"stringData":{"password":"s3cr3t"}}`
	tests := map[string]struct {
		lastApplied string
		paths       []string
		want        string
		wantErr     string
	}{
		"replicas handed to an autoscaler": {
			lastApplied: web, paths: []string{"spec.replicas"},
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"team":"shop"},"name":"web","namespace":"shop"},"spec":{"template":{"spec":{"containers":[{"env":[{"name":"DEBUG","value":"1"}],"image":"nginx:1.27","name":"web"}]}}}}` + "\n",
		},
		"an image handed to a deploy robot keeps its container's name": {
			lastApplied: web, paths: []string{"spec.template.spec.containers[name=web].image"},
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"team":"shop"},"name":"web","namespace":"shop"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"env":[{"name":"DEBUG","value":"1"}],"name":"web"}]}}}}` + "\n",
		},
		"the last label takes its emptied map along": {
			lastApplied: web, paths: []string{"metadata.labels[team]"},
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"env":[{"name":"DEBUG","value":"1"}],"image":"nginx:1.27","name":"web"}]}}}}` + "\n",
		},
		"the only env var takes its emptied list along, not the container": {
			lastApplied: web, paths: []string{"spec.template.spec.containers[name=web].env[name=DEBUG]"},
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"team":"shop"},"name":"web","namespace":"shop"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"image":"nginx:1.27","name":"web"}]}}}}` + "\n",
		},
		"two paths at once": {
			lastApplied: web, paths: []string{"spec.replicas", "spec.template.spec.containers[name=web].image"},
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"team":"shop"},"name":"web","namespace":"shop"},"spec":{"template":{"spec":{"containers":[{"env":[{"name":"DEBUG","value":"1"}],"name":"web"}]}}}}` + "\n",
		},
		"a path given twice, and one inside another given": {
			lastApplied: web, paths: []string{"spec.replicas", "spec.replicas", "spec.template.spec.containers[name=web].env[name=DEBUG].value", "spec.template.spec.containers[name=web].env"},
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"team":"shop"},"name":"web","namespace":"shop"},"spec":{"template":{"spec":{"containers":[{"image":"nginx:1.27","name":"web"}]}}}}` + "\n",
		},
		"a path last-applied does not have": {
			lastApplied: web, paths: []string{"spec.paused"}, wantErr: "last-applied has no spec.paused",
		},
		"a list element's key": {
			lastApplied: web, paths: []string{"spec.template.spec.containers[name=web].name"},
			wantErr: "spec.template.spec.containers[name=web].name is the key of its list element: hand over spec.template.spec.containers[name=web] instead",
		},
		"a Secret's key given as stringData, named as data's": {
			lastApplied: secret, paths: []string{"data.password"},
			want: `{"apiVersion":"v1","data":{"token":"dG9rZW4="},"kind":"Secret","metadata":{"name":"creds","namespace":"shop"}}` + "\n",
		},
		"a Secret's key given as data": {
			lastApplied: secret, paths: []string{"data.token"},
			want: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds","namespace":"shop"},"stringData":{"password":"s3cr3t"}}` + "\n",
		},
		"a Secret's key it has nowhere": {
			lastApplied: secret, paths: []string{"data.other"}, wantErr: "last-applied has no data.other",
		},
		"no last-applied": {
			paths: []string{"spec.replicas"}, wantErr: ErrMissingLastApplied.Error(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop"}}}
			if tc.lastApplied == secret {
				obj.SetAPIVersion("v1")
				obj.SetKind("Secret")
				obj.SetName("creds")
			}
			if tc.lastApplied != "" {
				obj.SetAnnotations(map[string]string{LastAppliedAnnotation: tc.lastApplied + "\n"})
			}
			var paths []Path
			for _, s := range tc.paths {
				p, err := ParsePath(s)
				if err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			got, err := LastAppliedWithout(obj, paths)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("last-applied\n got %s\nwant %s", got, tc.want)
			}
			if la := obj.GetAnnotations()[LastAppliedAnnotation]; la != tc.lastApplied+"\n" {
				t.Errorf("the object's last-applied changed: %s", la)
			}
		})
	}
}
