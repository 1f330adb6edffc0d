package review

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// A kubectl apply whose manifest the live object already matches changes
// only last-applied: it is still an apply, reviewed as one (found by
// test/e2e/generative: the apply after Flux's last-applied clean-up said
// nothing where kubectl hygiene diff predicted [missing-last-applied], and
// an apply that added replicas: 1 to a Deployment at 1 replica dropped an
// [orphaned-field] the previous apply had reported). kubectl apply
// edit-last-applied, under the same field manager, hands a field over by
// deleting it from last-applied, which an apply would delete from the
// object too: a save-config.
func TestKubectlApplyRecordingOnlyLastApplied(t *testing.T) {
	withReplicas := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`
	withoutReplicas := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
		`"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`
	withoutImage := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web"}]}}}}`
	twoMounts := func(image string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"template":{"spec":{"containers":[{"name":"web","image":"` + image + `",` +
			`"volumeMounts":[{"name":"cfg","mountPath":"/a","subPath":"a"},{"name":"cfg","mountPath":"/b","readOnly":true}]}]}}}}`
	}
	noLastApplied := func() *unstructured.Unstructured {
		d := deployment(t, "nginx:1", "")
		d.SetAnnotations(nil)
		return d
	}
	tests := map[string]struct {
		old, new *unstructured.Unstructured
		want     policy.Classification
	}{
		"kubectl apply to an object without last-applied that matches the manifest": {
			old: noLastApplied(), new: deployment(t, "nginx:1", withReplicas), want: policy.ClientSideApply,
		},
		"kubectl apply of a manifest that adds a field the object already has": {
			old: deployment(t, "nginx:1", withoutReplicas), new: deployment(t, "nginx:1", withReplicas), want: policy.ClientSideApply,
		},
		"kubectl apply edit-last-applied deleting a field the object keeps": {
			old: deployment(t, "nginx:1", withReplicas), new: deployment(t, "nginx:1", withoutReplicas), want: policy.SaveConfig,
		},
		// kubectl hygiene handover of a container's image: a field inside
		// a list element goes, the list stays.
		"a hand-over of a field inside a list element": {
			old: deployment(t, "nginx:1", withReplicas), new: deployment(t, "nginx:1", withoutImage), want: policy.SaveConfig,
		},
		// Two mounts of one volume share its name and differ in mountPath.
		"kubectl apply of a manifest the object matches, one volume mounted twice": {
			old: deployment(t, "nginx:1", twoMounts("nginx:1")), new: deployment(t, "nginx:1", twoMounts("nginx:2")), want: policy.ClientSideApply,
		},
		"kubectl apply of a manifest that adds a container field the object already has": {
			old: deployment(t, "nginx:1", withoutImage), new: deployment(t, "nginx:1", withReplicas), want: policy.ClientSideApply,
		},
		// A Service port names itself by its port (its merge key, with
		// the protocol): a single port usually has no name. Taken for an
		// apply, the hand-over of its nodePort (to the server, which
		// allocates it) drew [orphaned-field] on every field a person
		// had set.
		"a hand-over of a Service port's nodePort": {
			old: nodePortService(t, true), new: nodePortService(t, false), want: policy.SaveConfig,
		},
		"kubectl apply of a manifest that adds the nodePort the Service has": {
			old: nodePortService(t, false), new: nodePortService(t, true), want: policy.ClientSideApply,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewReviewer(nil, classifyingEvaluator, cluster{})
			u := Update{FieldManager: merge.ClientSideApplyManager, User: authenticationv1.UserInfo{Username: "alice"}, Old: tc.old, New: tc.new}
			rv, err := r.ReviewUpdate(t.Context(), u, Validate)
			if err != nil {
				t.Fatal(err)
			}
			var got policy.Classification
			if rv != nil {
				got = rv.Input.Classification
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("classification (-want +got):\n%s", diff)
			}
		})
	}
}

// kubectl apply always writes last-applied, so a write under its field
// manager that leaves the object without one is not an apply (found by
// test/e2e/generative: kubectl replace without --save-config drops
// last-applied; kubectl set image --field-manager=kubectl-client-side-apply
// then drew [missing-last-applied], whose "this apply cannot delete
// fields" is false of a set image).
func TestWriteUnderApplysNameWithoutLastAppliedIsNoApply(t *testing.T) {
	old, new := deployment(t, "nginx:1", ""), deployment(t, "nginx:2", "")
	old.SetAnnotations(nil)
	new.SetAnnotations(nil)
	r := NewReviewer(nil, classifyingEvaluator, cluster{})
	u := Update{FieldManager: merge.ClientSideApplyManager, User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new}
	rv, err := r.ReviewUpdate(t.Context(), u, Validate)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(policy.Imperative, rv.Input.Classification); diff != "" {
		t.Errorf("classification (-want +got):\n%s", diff)
	}
}

// nodePortService is Service shop/web with node port 30080, applied from a
// manifest whose one port, without a name, sets the node port when
// withNodePort.
func nodePortService(t *testing.T, withNodePort bool) *unstructured.Unstructured {
	t.Helper()
	port := `{"port":80,"targetPort":8080}`
	if withNodePort {
		port = `{"port":80,"targetPort":8080,"nodePort":30080}`
	}
	la := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"type":"NodePort","selector":{"app":"web"},"ports":[` + port + `]}}`
	obj := object(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop","uid":"u-1","resourceVersion":"7"},`+
		`"spec":{"type":"NodePort","selector":{"app":"web"},"ports":[{"port":80,"protocol":"TCP","targetPort":8080,"nodePort":30080}]}}`)
	obj.SetAnnotations(map[string]string{lastAppliedAnnotation: la})
	return obj
}
