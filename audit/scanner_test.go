package audit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

const laPath = "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"

func TestScanFindings(t *testing.T) {
	web := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	sts := merge.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "default", Name: "my-wonderhoy-app"}
	tests := map[string]struct {
		files  []string
		adjust func(objs []*unstructured.Unstructured)
		want   []Finding
		// message is a part of the first finding's message.
		message string
	}{
		"an object unchanged since its apply has no finding": {
			files: []string{"deployments/clean.yaml"},
			want:  []Finding{},
		},
		"an edited image is an imperative edit, not a rollback": {
			files:   []string{"deployments/edited.yaml"},
			want:    []Finding{{Rule: "imperative-edit", Action: policy.ActionDeny, Path: "spec.template.spec.containers[name=nginx].image", Object: web, UID: "uid-web"}},
			message: `[imperative-edit] Deployment shop/web: spec.template.spec.containers[name=nginx].image was changed outside kubectl apply by kubectl-edit at 2024-05-01T10:00:00Z (last-applied "nginx:1.14.2", now "nginx:1.99")`,
		},
		"a Deployment rolled back to an older ReplicaSet has a stale last-applied": {
			files:   []string{"deployments/undone.yaml"},
			want:    []Finding{{Rule: "stale-last-applied", Action: policy.ActionRepair, Path: laPath, Object: web, UID: "uid-web"}},
			message: "[stale-last-applied] Deployment shop/web: the pod template is revision 3 (ReplicaSet web-aaa, restored by a rollout undo)",
		},
		"kubectl edit that put the older ReplicaSet's template back is a hand edit, not a rollback": {
			files:  []string{"deployments/undone.yaml"},
			adjust: func(objs []*unstructured.Unstructured) { setManager(objs[0], "kubectl", "kubectl-edit") },
			want: []Finding{
				{Rule: "imperative-edit", Action: policy.ActionDeny, Path: "spec.template.spec.containers[name=nginx].image", Object: web, UID: "uid-web"},
				{Rule: "orphaned-field", Action: policy.ActionWarn, Path: "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", Object: web, UID: "uid-web"},
			},
			message: `[imperative-edit] Deployment shop/web: spec.template.spec.containers[name=nginx].image was changed outside kubectl apply by kubectl-edit at 2024-05-01T11:00:00Z (last-applied "nginx:1.16.1", now "nginx:1.14.2")`,
		},
		"kubectl patch that put the older ControllerRevision's template back is a hand edit, not a rollback": {
			files:  []string{"seed004/statefulset.yaml", "seed004/controllerrevisions.yaml"},
			adjust: func(objs []*unstructured.Unstructured) { setManager(objs[0], "kubectl", "kubectl-patch") },
			want: []Finding{
				{Rule: "imperative-edit", Action: policy.ActionDeny, Path: "spec.template.spec.containers[name=nginx].image", Object: sts, UID: "d2287d0e-ea2f-4d0c-b678-c08a32bc4f5a"},
				{Rule: "orphaned-field", Action: policy.ActionWarn, Path: "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", Object: sts, UID: "d2287d0e-ea2f-4d0c-b678-c08a32bc4f5a"},
			},
			message: "by kubectl-patch at",
		},
		"seed 004: a StatefulSet rolled back to its first revision has a stale last-applied": {
			files:   []string{"seed004/statefulset.yaml", "seed004/controllerrevisions.yaml"},
			want:    []Finding{{Rule: "stale-last-applied", Action: policy.ActionRepair, Path: laPath, Object: sts, UID: "d2287d0e-ea2f-4d0c-b678-c08a32bc4f5a"}},
			message: "(ControllerRevision my-wonderhoy-app-946448b85, restored by a rollout undo) but last-applied still describes a newer manifest, so the next kubectl apply will not delete what revision 1 has and your manifest does not (spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED], spec.template.spec.containers[name=nginx].image)",
		},
		"seed 004 after the controller renumbered the restored revision": {
			files: []string{"seed004/statefulset.yaml", "seed004/controllerrevisions.yaml"},
			adjust: func(objs []*unstructured.Unstructured) {
				for _, o := range objs {
					if o.GetName() == "my-wonderhoy-app-946448b85" {
						o.Object["revision"] = int64(3)
					}
				}
			},
			want: []Finding{{Rule: "stale-last-applied", Action: policy.ActionRepair, Path: laPath, Object: sts, UID: "d2287d0e-ea2f-4d0c-b678-c08a32bc4f5a"}},
		},
		"without its revisions the undo reads as drift and an orphan": {
			files: []string{"seed004/statefulset.yaml"},
			want: []Finding{
				{Rule: "imperative-edit", Action: policy.ActionDeny, Path: "spec.template.spec.containers[name=nginx].image", Object: sts, UID: "d2287d0e-ea2f-4d0c-b678-c08a32bc4f5a"},
				{Rule: "orphaned-field", Action: policy.ActionWarn, Path: "spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED]", Object: sts, UID: "d2287d0e-ea2f-4d0c-b678-c08a32bc4f5a"},
			},
		},
		"an edited object being deleted is on its way out: no finding": {
			files: []string{"deployments/edited.yaml"},
			adjust: func(objs []*unstructured.Unstructured) {
				objs[0].Object["metadata"].(map[string]any)["deletionTimestamp"] = "2024-05-02T10:00:00Z"
				objs[0].SetFinalizers([]string{"example.com/hold"})
			},
			want: []Finding{},
		},
		"an object made by kubectl create misses last-applied": {
			files:   []string{"deployments/created.yaml"},
			want:    []Finding{{Rule: "missing-last-applied", Action: policy.ActionWarn, Path: laPath, Object: web, UID: "uid-web"}},
			message: "[missing-last-applied] Deployment shop/web: the object has no kubectl.kubernetes.io/last-applied-configuration annotation",
		},
		"an object that Helm made is not apply's": {
			files: []string{"deployments/helm.yaml"},
			want:  []Finding{},
		},
		"an object that another object controls is its controller's": {
			files: []string{"deployments/owned.yaml"},
			want:  []Finding{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			for _, f := range tc.files {
				objs = append(objs, readObjects(t, f)...)
			}
			if tc.adjust != nil {
				tc.adjust(objs)
			}
			s := NewScanner(newFakeClient(objs...), testAnalyzer(t), testEngine(t))
			report, err := s.Scan(t.Context(), Target{})
			if err != nil {
				t.Fatal(err)
			}
			if len(report.Errors) > 0 {
				t.Errorf("errors: %v", report.Errors)
			}
			if diff := cmp.Diff(tc.want, withoutMessages(report.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, f := range report.Findings {
				if !strings.HasPrefix(f.Message, "["+string(f.Rule)+"] ") {
					t.Errorf("message %q does not start with its rule", f.Message)
				}
			}
			if tc.message != "" && (len(report.Findings) == 0 || !strings.Contains(report.Findings[0].Message, tc.message)) {
				t.Errorf("first message does not contain %q:\n%v", tc.message, report.Findings)
			}
		})
	}
}

func TestScanDeniedAndNamespaceLabels(t *testing.T) {
	objs := readObjects(t, "deployments/edited.yaml")
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName("shop")
	s := NewScanner(newFakeClient(append(objs, ns)...), testAnalyzer(t), testEngine(t))
	report, err := s.Scan(t.Context(), Target{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if !report.Denied() {
		t.Errorf("Denied() = false for %v", report.Findings)
	}
	ns.SetLabels(map[string]string{policy.DefaultNamespaceLabel: "warn"})
	s = NewScanner(newFakeClient(append(objs, ns)...), testAnalyzer(t), testEngine(t))
	report, err = s.Scan(t.Context(), Target{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if report.Denied() || len(report.Findings) != 1 || report.Findings[0].Action != policy.ActionWarn {
		t.Errorf("with the namespace labelled warn: %v", report.Findings)
	}
}

func TestScanOtherNamespaceIsNotListed(t *testing.T) {
	s := NewScanner(newFakeClient(readObjects(t, "deployments/edited.yaml")...), testAnalyzer(t), testEngine(t))
	report, err := s.Scan(t.Context(), Target{Namespace: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if report.Objects != 0 || len(report.Findings) != 0 {
		t.Errorf("scanned %d objects, findings %v", report.Objects, report.Findings)
	}
}

func ExampleEventReason() {
	fmt.Println(EventReason("imperative-edit"), EventReason("last-applied-too-large"))
	// Output: ImperativeEdit LastAppliedTooLarge
}

// setManager renames obj's managedFields entries of manager from to to:
// the same write, by another command.
func setManager(obj *unstructured.Unstructured, from, to string) {
	entries := obj.GetManagedFields()
	for i := range entries {
		if entries[i].Manager == from {
			entries[i].Manager = to
		}
	}
	obj.SetManagedFields(entries)
}
