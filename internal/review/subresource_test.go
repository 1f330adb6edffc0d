package review

import (
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// A write to a subresource other than /scale is no write of the object:
// the API server keeps from it all but the subresource's own fields (a
// /status write keeps the stored spec, a custom resource's its metadata
// too), and an Apply entry of the subresource is no configuration of the
// object. The core has no opinion on it (a review of nil, as for a
// controller's write), whoever sends it and whatever its pass: judged as
// the object's own write, kubectl apply --server-side --subresource=status
// was a server-side apply of the object's configuration, warned of the
// orphans of the earlier apply and, with prune, had the mutating pass
// remove one in a request whose spec the API server throws away.
func TestSubresourceWritesAreNotReviewed(t *testing.T) {
	const dir = "status-apply"
	person := authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}}
	prune := policy.Config{Rules: map[string]policy.RuleConfig{string(policy.RuleOrphanedField): {Action: policy.ActionPrune}}}
	tests := map[string]struct {
		subresource, manager string
		user                 authenticationv1.UserInfo
		pass                 Pass
		cfg                  policy.Config
	}{
		"kubectl apply --server-side --subresource=status, validating pass": {
			subresource: "status", manager: "kubectl", user: person, pass: Validate},
		"kubectl apply --server-side --subresource=status, mutating pass with orphaned-field prune": {
			subresource: "status", manager: "kubectl", user: person, pass: Mutate, cfg: prune},
		"kubectl edit --subresource=status": {
			subresource: "status", manager: "kubectl-edit", user: person, pass: Validate},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewReviewer(nil, engine(t, tc.cfg), cluster{})
			u := Update{Subresource: tc.subresource, FieldManager: tc.manager, User: tc.user,
				Old: fixture(t, dir, "old"), New: fixture(t, dir, "applied")}
			rv, err := r.ReviewUpdate(t.Context(), u, tc.pass)
			if err != nil {
				t.Fatal(err)
			}
			if rv != nil {
				t.Errorf("ReviewUpdate: reviewed as %q with decisions %v; want no review", rv.Input.Classification, decisionsOf(rv))
			}
			rv, err = r.Review(t.Context(), requestOf(t, u), tc.pass)
			if err != nil {
				t.Fatal(err)
			}
			if rv != nil {
				t.Errorf("Review: reviewed as %q with decisions %v; want no review", rv.Input.Classification, decisionsOf(rv))
			}
		})
	}
}

// requestOf is the AdmissionRequest in which kube-apiserver sends u to a
// webhook of the object's resource (the plural of its kind) or of u's
// subresource of it.
func requestOf(t *testing.T, u Update) *admissionv1.AdmissionRequest {
	t.Helper()
	object, err := json.Marshal(u.New.Object)
	if err != nil {
		t.Fatal(err)
	}
	oldObject, err := json.Marshal(u.Old.Object)
	if err != nil {
		t.Fatal(err)
	}
	options, err := json.Marshal(metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{Kind: "UpdateOptions", APIVersion: "meta.k8s.io/v1"}, FieldManager: u.FieldManager})
	if err != nil {
		t.Fatal(err)
	}
	gvk := u.New.GroupVersionKind()
	kind := metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
	resource := metav1.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: strings.ToLower(gvk.Kind) + "s"}
	return &admissionv1.AdmissionRequest{
		UID: "status-apply", Kind: kind, Resource: resource, SubResource: u.Subresource,
		RequestKind: &kind, RequestResource: &resource, RequestSubResource: u.Subresource,
		Name: u.New.GetName(), Namespace: u.New.GetNamespace(), Operation: admissionv1.Update, UserInfo: u.User,
		Object: runtime.RawExtension{Raw: object}, OldObject: runtime.RawExtension{Raw: oldObject},
		DryRun: ptr.To(false), Options: runtime.RawExtension{Raw: options},
	}
}
