package chart_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/utils/ptr"
)

// lastApplied is kubectl's annotation of the last applied configuration.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// write is an UPDATE request as the API server's admission chain sees it.
type write struct {
	resource     schema.GroupVersionResource
	subresource  string
	fieldManager string
	// user is alice, a person, unless set.
	user     string
	old, new runtime.Object
}

// attributes are u's admission attributes, versioned as the webhooks get
// them (matchPolicy Equivalent: the objects are in the request's version).
func (u write) attributes() *admission.VersionedAttributes {
	name := u.user
	if name == "" {
		name = "alice"
	}
	gvk := u.new.GetObjectKind().GroupVersionKind()
	attr := admission.NewAttributesRecord(u.new, u.old, gvk, "default", "web", u.resource, u.subresource,
		admission.Update, &metav1.UpdateOptions{FieldManager: u.fieldManager}, false, &user.DefaultInfo{Name: name})
	return &admission.VersionedAttributes{
		Attributes:         attr,
		VersionedKind:      gvk,
		VersionedObject:    admission.NewLazyObject(u.new),
		VersionedOldObject: admission.NewLazyObject(u.old),
	}
}

// renderedWebhooks are the chart's two webhooks for scenario, named by
// pass, as the API server's webhook dispatcher reads them; failurePolicy
// Fail, so that an expression that does not compile or evaluate fails the
// test instead of skipping the call.
func renderedWebhooks(t *testing.T, scenario string) map[string]webhook.WebhookAccessor {
	t.Helper()
	objs := decode(t, render(t, scenario))
	mutating := only[admissionregistrationv1.MutatingWebhookConfiguration](t, objs, "MutatingWebhookConfiguration").Webhooks[0]
	validating := only[admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "ValidatingWebhookConfiguration").Webhooks[0]
	mutating.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	validating.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	return map[string]webhook.WebhookAccessor{
		"mutate":   webhook.NewMutatingWebhookAccessor("mutate", scenario, &mutating),
		"validate": webhook.NewValidatingWebhookAccessor("validate", scenario, &validating),
	}
}

// conditionsMatch reports whether hook's match conditions, compiled and
// evaluated by the API server's own matcher, send it u.
func conditionsMatch(t *testing.T, hook webhook.WebhookAccessor, u write) bool {
	t.Helper()
	compiler := cel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	res := hook.GetCompiledMatcher(compiler).Match(t.Context(), u.attributes(), nil, nil)
	if res.Error != nil {
		t.Fatalf("%s: evaluating the match conditions: %v", hook.GetName(), res.Error)
	}
	return res.Matches
}

// called reports whether the API server calls hook for u: one of its
// rules matches (the API server's rule matcher) and its match conditions
// hold. The namespace and object selectors are left out: u is in a
// namespace and on an object that both select.
func called(t *testing.T, hook webhook.WebhookAccessor, u write) bool {
	t.Helper()
	attr := u.attributes()
	for _, r := range hook.GetRules() {
		if (&rules.Matcher{Rule: r, Attr: attr}).Matches() {
			return conditionsMatch(t, hook, u)
		}
	}
	return false
}

// deployment is an apps/v1 Deployment, with last-applied when it is not
// empty.
func deployment(replicas int32, applied string) *appsv1.Deployment {
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
	}
	if applied != "" {
		d.Annotations = map[string]string{lastApplied: applied}
	}
	return d
}

// scale is the autoscaling/v1 Scale of a /scale request.
func scale(replicas int32) *autoscalingv1.Scale {
	return &autoscalingv1.Scale{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       autoscalingv1.ScaleSpec{Replicas: replicas},
	}
}

// pod is a v1 Pod with one container.
func pod(image string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
	}
}

// widget is a custom resource of the all and full scenarios' extraKinds.
func widget(size int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": size}}}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetName("web")
	u.SetNamespace("default")
	return u
}

var (
	deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
	podsGVR        = corev1.SchemeGroupVersion.WithResource("pods")
	widgetsGVR     = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

// TestAPIServerCallsTheWebhooksForTheObjectAndItsScaleOnly renders each
// scenario and asks the API server's own rule matcher and CEL match
// conditions whether it calls each webhook: for the write of an object
// and of its /scale as before, and never for another subresource's, which
// the server lets through unreviewed (reviewsSubresource in
// internal/review/update.go).
func TestAPIServerCallsTheWebhooksForTheObjectAndItsScaleOnly(t *testing.T) {
	type want struct{ Mutate, Validate bool }
	tests := map[string]struct {
		// scenarios are the scenarios that intercept the kind: every one
		// when empty.
		scenarios []string
		write     write
		want      want
	}{
		"kubectl apply of a Deployment goes to both webhooks": {
			write: write{resource: deploymentsGVR, fieldManager: "kubectl-client-side-apply",
				old: deployment(1, `{"spec":{"replicas":1}}`), new: deployment(2, `{"spec":{"replicas":2}}`)},
			want: want{Mutate: true, Validate: true},
		},
		"a client's /scale of a Deployment goes to the validating webhook only": {
			write: write{resource: deploymentsGVR, subresource: "scale", old: scale(1), new: scale(2)},
			want:  want{Validate: true},
		},
		"kubectl scale goes to the validating webhook only": {
			write: write{resource: deploymentsGVR, subresource: "scale", fieldManager: "kubectl-scale", old: scale(1), new: scale(2)},
			want:  want{Validate: true},
		},
		"a server-side apply of a Deployment's /status goes to neither": {
			write: write{resource: deploymentsGVR, subresource: "status", fieldManager: "kubectl",
				old: deployment(1, `{"spec":{"replicas":1}}`), new: deployment(1, `{"spec":{"replicas":1}}`)},
		},
		"a third-party controller's /status of a Deployment goes to neither": {
			write: write{resource: deploymentsGVR, subresource: "status", fieldManager: "rollouts-controller",
				user: "system:serviceaccount:argo-rollouts:argo-rollouts", old: deployment(1, ""), new: deployment(1, "")},
		},
		"kubectl apply of a Pod goes to both webhooks under kinds all": {
			scenarios: []string{"all"},
			write: write{resource: podsGVR, fieldManager: "kubectl-client-side-apply",
				old: pod("nginx:1"), new: pod("nginx:2")},
			want: want{Mutate: true, Validate: true},
		},
		"a Pod's /resize goes to neither under kinds all": {
			scenarios: []string{"all"},
			write:     write{resource: podsGVR, subresource: "resize", fieldManager: "kubectl-patch", old: pod("nginx:1"), new: pod("nginx:1")},
		},
		"a Pod's /ephemeralcontainers goes to neither under kinds all": {
			scenarios: []string{"all"},
			write:     write{resource: podsGVR, subresource: "ephemeralcontainers", fieldManager: "kubectl-debug", old: pod("nginx:1"), new: pod("nginx:1")},
		},
		"a Pod's /status goes to neither under kinds all": {
			scenarios: []string{"all"},
			write:     write{resource: podsGVR, subresource: "status", fieldManager: "kubectl", old: pod("nginx:1"), new: pod("nginx:1")},
		},
		"an extra kind's /scale goes to the validating webhook only": {
			scenarios: []string{"all", "full"},
			write:     write{resource: widgetsGVR, subresource: "scale", old: scale(1), new: scale(2)},
			want:      want{Validate: true},
		},
		"an extra kind's /status goes to neither": {
			scenarios: []string{"all", "full"},
			write:     write{resource: widgetsGVR, subresource: "status", fieldManager: "kubectl", old: widget(1), new: widget(1)},
		},
	}
	hooks := map[string]map[string]webhook.WebhookAccessor{}
	for _, scenario := range scenarios {
		hooks[scenario] = renderedWebhooks(t, scenario)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := tc.scenarios
			if len(in) == 0 {
				in = scenarios
			}
			for _, scenario := range in {
				h := hooks[scenario]
				got := want{Mutate: called(t, h["mutate"], tc.write), Validate: called(t, h["validate"], tc.write)}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s: webhooks called (-want +got):\n%s", scenario, diff)
				}
			}
		})
	}
}

// TestMayHaveADecisionSendsNoSubresourceButScale evaluates the validating
// webhook's match conditions alone, as if its rules listed any
// subresource: of the writes that name no field manager and carry no
// last-applied, only /scale's may have a decision.
func TestMayHaveADecisionSendsNoSubresourceButScale(t *testing.T) {
	tests := map[string]struct {
		write write
		want  bool
	}{
		"a client's /scale is sent": {
			write: write{resource: deploymentsGVR, subresource: "scale", old: scale(1), new: scale(2)},
			want:  true,
		},
		"a client's /status is not sent": {
			write: write{resource: deploymentsGVR, subresource: "status", old: deployment(1, ""), new: deployment(1, "")},
		},
		"a client's write of the object itself is not sent": {
			write: write{resource: deploymentsGVR, old: deployment(1, ""), new: deployment(2, "")},
		},
		"a client's write of the object itself with last-applied is sent": {
			write: write{resource: deploymentsGVR, old: deployment(1, `{}`), new: deployment(2, `{}`)},
			want:  true,
		},
	}
	validate := renderedWebhooks(t, "default")["validate"]
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := conditionsMatch(t, validate, tc.write); got != tc.want {
				t.Errorf("sent = %t, want %t", got, tc.want)
			}
		})
	}
}
