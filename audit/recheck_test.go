package audit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The Runner reads each object again right before its fix and writes only
// what still holds, pinned to the resourceVersion it read: a change
// between the scan and the write that takes the field out of the fix
// leaves the object as it is (a conflict); a change that leaves the fix as
// it was still gets it, tested against the new resourceVersion.
func TestRunnerRechecksBeforeWriting(t *testing.T) {
	tests := map[string]struct {
		// change changes Deployment shop/web after the scan listed it.
		change func(obj *unstructured.Unstructured)
		// wantPatch is the patch written, "" for none.
		wantPatch  string
		wantResult string
	}{
		"a controller took restartedAt over: no longer an orphan": {
			change: func(obj *unstructured.Unstructured) {
				mf := obj.GetManagedFields()
				mf = append(mf, metav1.ManagedFieldsEntry{Manager: "restart-controller", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1", FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/restartedAt":{}}}}}}`)})
				obj.SetManagedFields(mf)
			},
			wantResult: "conflict",
		},
		"restartedAt set to another value": {
			change: func(obj *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(obj.Object, "2001-01-01T00:00:00Z", "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
			},
			wantResult: "conflict",
		},
		"a label added: the same fix, pinned to the new resourceVersion": {
			change: func(obj *unstructured.Unstructured) {
				obj.SetLabels(map[string]string{"team": "shop"})
			},
			wantPatch: `[{"op":"test","path":"/metadata/resourceVersion","value":"21"},` +
				`{"op":"test","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","value":`,
			wantResult: "applied",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client := newFakeClient(append(readObjects(t, "deployments/restarted.yaml"), namespaceObject("shop", nil))...)
			changed := false
			client.PrependReactor("get", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
				if !changed {
					changed = true
					obj, err := client.Tracker().Get(deployments, "shop", "web")
					if err != nil {
						return true, nil, err
					}
					u := obj.(*unstructured.Unstructured).DeepCopy()
					tc.change(u)
					u.SetResourceVersion("21")
					if err := client.Tracker().Update(deployments, u, "shop"); err != nil {
						return true, nil, err
					}
				}
				return false, nil, nil
			})
			var patches []string
			client.PrependReactor("patch", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
				patches = append(patches, string(a.(k8stesting.PatchAction).GetPatch()))
				return false, nil, nil
			})
			r := fixOnce(t, client)
			if !changed {
				t.Fatal("the fix did not read the object again")
			}
			if tc.wantPatch == "" {
				if len(patches) != 0 {
					t.Errorf("patches written: %q, want none", patches)
				}
			} else if len(patches) != 1 || !strings.HasPrefix(patches[0], tc.wantPatch) {
				t.Errorf("patches written: %q, want one starting with %s", patches, tc.wantPatch)
			}
			got := map[string]float64{}
			for _, result := range []string{"applied", "conflict", "error"} {
				if n := counterValue(r, result); n > 0 {
					got[result] = n
				}
			}
			if diff := cmp.Diff(map[string]float64{tc.wantResult: 1}, got); diff != "" {
				t.Errorf("fixes by result (-want +got):\n%s", diff)
			}
		})
	}
}

// counterValue is apply_hygiene_audit_fixes_total of orphaned-field with
// result.
func counterValue(r *Runner, result string) float64 {
	return testutil.ToFloat64(r.fixes.WithLabelValues("orphaned-field", result))
}

// A write that lands between the recheck's read and the patch (a
// controller's status update) makes the API server refuse the patch's
// test of resourceVersion: the Runner reads, rechecks and writes again,
// and the fix is written (the audit e2e failed on a Deployment the
// controller was rolling).
func TestRunnerWritesAgainAfterAStatusUpdate(t *testing.T) {
	client := newFakeClient(append(readObjects(t, "deployments/restarted.yaml"), namespaceObject("shop", nil))...)
	var patches []string
	client.PrependReactor("patch", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		patches = append(patches, string(a.(k8stesting.PatchAction).GetPatch()))
		if len(patches) == 1 {
			// The controller's status update lands first: a new
			// resourceVersion, so the patch's test of it fails.
			obj, err := client.Tracker().Get(deployments, "shop", "web")
			if err != nil {
				return true, nil, err
			}
			u := obj.(*unstructured.Unstructured).DeepCopy()
			_ = unstructured.SetNestedField(u.Object, int64(3), "status", "observedGeneration")
			u.SetResourceVersion("22")
			if err := client.Tracker().Update(deployments, u, "shop"); err != nil {
				return true, nil, err
			}
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", nil)
		}
		return false, nil, nil
	})
	r := fixOnce(t, client)
	if len(patches) != 2 {
		t.Errorf("%d patches written, want 2 (refused, then written)", len(patches))
	}
	if got := counterValue(r, "applied"); got != 1 {
		t.Errorf("applied fixes = %v, want 1", got)
	}
	if got := counterValue(r, "conflict"); got != 0 {
		t.Errorf("conflicts = %v, want 0", got)
	}
}

// A patch refused although the object did not move (an admission policy
// that denies it as Invalid) is not sent again: one write, a conflict.
func TestRunnerDoesNotRepeatAPatchRefusedWithoutAChange(t *testing.T) {
	client := newFakeClient(append(readObjects(t, "deployments/restarted.yaml"), namespaceObject("shop", nil))...)
	var patches int
	client.PrependReactor("patch", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		patches++
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", nil)
	})
	r := fixOnce(t, client)
	if patches != 1 {
		t.Errorf("%d patches sent, want 1", patches)
	}
	if got := counterValue(r, "conflict"); got != 1 {
		t.Errorf("conflicts = %v, want 1", got)
	}
}

// fixOnce runs one scan with fixes over client and returns its Runner.
func fixOnce(t *testing.T, client *dynamicfake.FakeDynamicClient) *Runner {
	t.Helper()
	r, err := NewRunner(NewScanner(client, testAnalyzer(t), testFixEngine(t)), RunnerOptions{Fixer: NewFixer(client, testMapper(), FixFieldManager)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	return r
}
