package diff

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// webManifest is the manifest of the Deployment of TestDiffIsAdmission,
// applied once.
const webManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: nginx, image: "nginx:1.27"}]
`

// webLive is webManifest as stored (JSON, as kubectl get -o json prints
// it) after its apply and a kubectl rollout restart, which set
// restartedAt: an orphan for the next apply that sends anything. The test
// sets its last-applied.
const webLive = `{
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {
	 "name": "web",
	 "namespace": "shop",
	 "managedFields": [
	  {
	   "manager": "kubectl-client-side-apply",
	   "operation": "Update",
	   "apiVersion": "apps/v1",
	   "time": "2024-01-01T00:00:00Z",
	   "fieldsType": "FieldsV1",
	   "fieldsV1": {
	    "f:metadata": {
	     "f:annotations": {
	      ".": {},
	      "f:kubectl.kubernetes.io/last-applied-configuration": {}
	     }
	    },
	    "f:spec": {
	     "f:selector": {},
	     "f:template": {
	      "f:metadata": {
	       "f:labels": {
	        ".": {},
	        "f:app": {}
	       }
	      },
	      "f:spec": {
	       "f:containers": {
	        "k:{\"name\":\"nginx\"}": {
	         ".": {},
	         "f:image": {},
	         "f:name": {}
	        }
	       }
	      }
	     }
	    }
	   }
	  },
	  {
	   "manager": "kubectl-rollout",
	   "operation": "Update",
	   "apiVersion": "apps/v1",
	   "time": "2024-01-02T00:00:00Z",
	   "fieldsType": "FieldsV1",
	   "fieldsV1": {
	    "f:spec": {
	     "f:template": {
	      "f:metadata": {
	       "f:annotations": {
	        ".": {},
	        "f:kubectl.kubernetes.io/restartedAt": {}
	       }
	      }
	     }
	    }
	   }
	  }
	 ]
	},
	"spec": {
	 "selector": {
	  "matchLabels": {
	   "app": "web"
	  }
	 },
	 "template": {
	  "metadata": {
	   "labels": {
	    "app": "web"
	   },
	   "annotations": {
	    "kubectl.kubernetes.io/restartedAt": "2024-01-02T00:00:00Z"
	   }
	  },
	  "spec": {
	   "containers": [
	    {
	     "name": "nginx",
	     "image": "nginx:1.27"
	    }
	   ]
	  }
	 }
	}
}
`

// TestDiffIsAdmission: diff predicts what admission answers to the UPDATE
// that kubectl apply sends, and nothing when kubectl sends none.
func TestDiffIsAdmission(t *testing.T) {
	restartedAt := "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"
	tests := map[string]struct {
		// lastApplied is live's annotation; "": webManifest's, as apply
		// writes it.
		lastApplied string
		// image is the manifest's image; "": webManifest's.
		image     string
		wantPatch string
		want      []ruleAt
	}{
		"a changed manifest: the apply keeps the orphan": {
			image:     "nginx:1.28",
			wantPatch: "non-empty",
			want:      []ruleAt{{"orphaned-field", "warn", restartedAt}},
		},
		"an unchanged manifest: kubectl sends nothing so admission says nothing": {
			wantPatch: "{}",
			want:      []ruleAt{},
		},
		"an invalid last-applied: no patch and a warning about it": {
			lastApplied: "not JSON",
			wantPatch:   "null",
			want:        []ruleAt{{"invalid-last-applied", "warn", judge.LastAppliedPath}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			manifest := readYAMLString(t, webManifest)
			live := &unstructured.Unstructured{}
			if err := live.UnmarshalJSON([]byte(webLive)); err != nil {
				t.Fatal(err)
			}
			la := tc.lastApplied
			if la == "" {
				var err error
				if la, err = merge.LastAppliedValue(manifest); err != nil {
					t.Fatal(err)
				}
			}
			live.SetAnnotations(map[string]string{merge.LastAppliedAnnotation: la})
			if tc.image != "" {
				containers, _, _ := unstructured.NestedSlice(manifest.Object, "spec", "template", "spec", "containers")
				containers[0].(map[string]any)["image"] = tc.image
				if err := unstructured.SetNestedSlice(manifest.Object, containers, "spec", "template", "spec", "containers"); err != nil {
					t.Fatal(err)
				}
			}
			var got struct {
				Patch    json.RawMessage `json:"patch"`
				Findings []ruleAt        `json:"findings"`
			}
			runJSON(t, &got, "-f", writeJSON(t, manifest), "--live", writeJSON(t, live), "-o", "json")
			if patch := string(got.Patch); patch != tc.wantPatch && (tc.wantPatch != "non-empty" || patch == "{}" || patch == "null") {
				t.Errorf("patch = %s, want %s", patch, tc.wantPatch)
			}
			if diff := cmp.Diff(tc.want, got.Findings); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// ruleAt is a finding's rule, action and path.
type ruleAt struct {
	Rule   string `json:"rule"`
	Action string `json:"action"`
	Path   string `json:"path"`
}

func readYAMLString(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

func writeJSON(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	raw, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), obj.GetName()+".json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
