package kube

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"
)

// rule is the part of the API server's update validation a test needs:
// an error for the update of old into new, or nil.
type rule func(old, new map[string]any) *field.Error

// TestRemovalVerdictIsTheWritesOwn: the API server's answer to a
// removal's dry run depends on the whole object the write would store and
// on the object stored, not only on the scalars on the way to the field.
// A verdict kept for one write (a kubectl diff, an apply in warn mode)
// must not answer another that differs elsewhere: a "sticks" kept from
// before makes a prune that the server refuses together with the user's
// apply, a rejection kept from before hides a true orphan.
func TestRemovalVerdictIsTheWritesOwn(t *testing.T) {
	tests := map[string]struct {
		fixture string
		gvr     schema.GroupVersionResource
		pointer string
		rule    rule
		// first is the verdict of live and target, later the one of
		// later-live and later-target.
		first, later RemovalVerdict
	}{
		"a volume that a container now mounts (ValidatePodSpec)": {
			fixture: "volume-now-mounted",
			gvr:     schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
			pointer: "/spec/template/spec/volumes/1",
			rule:    everyMountHasAVolume,
			first:   RemovalSticks, later: RemovalRejected,
		},
		"a field a transition rule froze since (status.phase Provisioned)": {
			fixture: "storage-now-provisioned",
			gvr:     schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "databases"},
			pointer: "/spec/storage/class",
			rule:    storageFrozenOnceProvisioned,
			first:   RemovalSticks, later: RemovalRejected,
		},
		"the only element of a list that now has another (minItems 1)": {
			fixture: "list-now-longer",
			gvr:     schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gateways"},
			pointer: "/spec/endpoints/0",
			rule:    endpointsNotEmpty,
			first:   RemovalRejected, later: RemovalSticks,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			load := func(file string) *unstructured.Unstructured {
				return yamlObject(t, filepath.Join("testdata", "removal-cache", tc.fixture, file+".yaml"))
			}
			var live *unstructured.Unstructured
			client := validatingServer(t, tc.gvr, func() *unstructured.Unstructured { return live }, tc.rule)
			c := NewCluster(client, 0)
			live = load("live")
			first, err := c.RemovalSticks(t.Context(), tc.gvr, live, load("target"), tc.pointer)
			if err != nil || first != tc.first {
				t.Fatalf("first RemovalSticks = %q, %v, want %q", first, err, tc.first)
			}
			live = load("later-live")
			later, err := c.RemovalSticks(t.Context(), tc.gvr, live, load("later-target"), tc.pointer)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.later, later); diff != "" {
				t.Errorf("later verdict (-want +got), the server's answer to the later write:\n%s", diff)
			}
		})
	}
}

// validatingServer answers every patch of gvr with the patch applied to
// the object live returns, or with the 422 of rule.
func validatingServer(t *testing.T, gvr schema.GroupVersionResource, live func() *unstructured.Unstructured, r rule) *dynamicfake.FakeDynamicClient {
	t.Helper()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "List"})
	client.PrependReactor("patch", gvr.Resource, func(action clienttesting.Action) (bool, runtime.Object, error) {
		var patch map[string]any
		if err := json.Unmarshal(action.(clienttesting.PatchActionImpl).GetPatch(), &patch); err != nil {
			t.Fatal(err)
		}
		old := live()
		stored := mergePatch(old.DeepCopy().Object, patch)
		if e := r(old.Object, stored); e != nil {
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: gvr.Group, Kind: old.GetKind()}, old.GetName(), field.ErrorList{e})
		}
		return true, &unstructured.Unstructured{Object: stored}, nil
	})
	return client
}

// everyMountHasAVolume is ValidatePodSpec's: a volume mount names one of
// the pod's volumes.
func everyMountHasAVolume(_, new map[string]any) *field.Error {
	volumes, _, _ := unstructured.NestedSlice(new, "spec", "template", "spec", "volumes")
	names := map[string]bool{}
	for _, v := range volumes {
		names[v.(map[string]any)["name"].(string)] = true
	}
	containers, _, _ := unstructured.NestedSlice(new, "spec", "template", "spec", "containers")
	for i, c := range containers {
		mounts, _, _ := unstructured.NestedSlice(c.(map[string]any), "volumeMounts")
		for j, m := range mounts {
			if name := m.(map[string]any)["name"].(string); !names[name] {
				return field.NotFound(field.NewPath("spec", "template", "spec", "containers").Index(i).Child("volumeMounts").Index(j).Child("name"), name)
			}
		}
	}
	return nil
}

// storageFrozenOnceProvisioned is the CRD's transition rule
// oldSelf.status.phase != 'Provisioned' || self.spec.storage == oldSelf.spec.storage
// (fieldPath .spec.storage).
func storageFrozenOnceProvisioned(old, new map[string]any) *field.Error {
	phase, _, _ := unstructured.NestedString(old, "status", "phase")
	before, _, _ := unstructured.NestedMap(old, "spec", "storage")
	after, _, _ := unstructured.NestedMap(new, "spec", "storage")
	if phase == "Provisioned" && !cmp.Equal(before, after) {
		return field.Invalid(field.NewPath("spec", "storage"), after, "storage may not change once provisioned")
	}
	return nil
}

// endpointsNotEmpty is the CRD's minItems: 1 of spec.endpoints.
func endpointsNotEmpty(_, new map[string]any) *field.Error {
	if endpoints, found, _ := unstructured.NestedSlice(new, "spec", "endpoints"); found && len(endpoints) == 0 {
		return field.Invalid(field.NewPath("spec", "endpoints"), endpoints, "should have at least 1 items")
	}
	return nil
}

// yamlObject reads the object of the YAML file at path.
func yamlObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}
