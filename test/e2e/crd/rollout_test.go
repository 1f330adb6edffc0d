package crd_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

var rolloutsGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}

// Rollout labels and annotations of Argo Rollouts' controller
// (DefaultRolloutUniqueLabelKey, utils/annotations).
const (
	rolloutHashLabel          = "rollouts-pod-template-hash"
	rolloutRevisionAnnotation = "rollout.argoproj.io/revision"
)

// installRolloutCRD applies the stand-in of Argo Rollouts' CRD and waits
// until it is established.
func installRolloutCRD(t *testing.T, k framework.Kubectl) {
	t.Helper()
	k.Run(t, "apply", "-f", "testdata/rollout-crd.yaml").MustSucceed(t)
	k.Run(t, "wait", "--for=condition=Established", "crd/rollouts.argoproj.io", "--timeout=60s").MustSucceed(t)
}

// A person's `kubectl argo rollouts undo` of a Rollout in extraKinds
// (finding 34 of docs/reliability.md) is the undo it is, not an edit of
// the image that last-applied owns: the plugin's write (a JSON patch
// replacing spec.template with the previous ReplicaSet's template less
// its hash label, without a field manager) passes, and the Rollout runs
// revision 1's image. Its ReplicaSets here are made as Argo Rollouts'
// controller makes them (no controller runs in the test), and the write
// is the plugin's, byte for byte, under its user agent.
func TestArgoRolloutsUndoOfARolloutPasses(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	installRolloutCRD(t, k)
	const plugin = "kubectl-argo-rollouts/v1.8.3 (linux/amd64) argoproj/argo-rollouts"
	rollouts := dynamic.NewForConfigOrDie(restConfig(t, plugin)).Resource(rolloutsGVR).Namespace(f.Namespace)

	framework.ApplyPredicted(t, k, "testdata/rollout-v1.yaml").MustSucceed(t)
	revision1 := makeRolloutReplicaSet(t, f, rollouts, 1)
	framework.ApplyPredicted(t, k, "testdata/rollout-v2.yaml").MustSucceed(t)
	makeRolloutReplicaSet(t, f, rollouts, 2)

	warnings := &framework.WarningLog{}
	cfg := restConfig(t, plugin)
	cfg.WarningHandler = warnings
	undo := dynamic.NewForConfigOrDie(cfg).Resource(rolloutsGVR).Namespace(f.Namespace)
	template := revision1.Spec.Template.DeepCopy()
	delete(template.Labels, rolloutHashLabel)
	patch, err := json.Marshal([]any{map[string]any{"op": "replace", "path": "/spec/template", "value": template}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := undo.Patch(t.Context(), "web", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("kubectl argo rollouts undo's patch: %v", err)
	}
	framework.WantLines(t, k.JSONPath(t, "rollouts.argoproj.io/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.21")
	// Confirmed, not repaired: a Rollout's ReplicaSet template holds what
	// its controller and the API server added, so no restored value is
	// proven a manifest's, and last-applied stays as it was.
	framework.WantLines(t, strings.TrimSpace(warnings.String()), fmt.Sprintf("Warning: [stale-last-applied] Rollout %[1]s/web: rollout undo restored revision 1 "+
		"but last-applied still describes the newer manifest, so the next kubectl apply will not delete what revision 1 has and your manifest does not "+
		"(spec.template.spec.containers, spec.template.spec.dnsPolicy, spec.template.spec.restartPolicy, spec.template.spec.schedulerName, "+
		"spec.template.spec.securityContext and 1 more). Check with: kubectl apply view-last-applied rollouts.argoproj.io/web -n %[1]s", f.Namespace))
	framework.WantLines(t, k.JSONPath(t, "rollouts.argoproj.io/web", "{.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}"),
		`{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"annotations":{},"name":"web","namespace":"`+f.Namespace+`"},`+
			`"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"strategy":{"canary":{"steps":[{"setWeight":20},{"pause":{}}]}},`+
			`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.22","name":"web","ports":[{"containerPort":80}]}]}}}}`)
}

// makeRolloutReplicaSet makes the ReplicaSet of the Rollout web's current
// template as Argo Rollouts' controller does: controlled by the Rollout,
// its template the Rollout's with the hash label added (the API server
// defaults it as a ReplicaSet's), numbered by the revision annotation.
func makeRolloutReplicaSet(t *testing.T, f *framework.Framework, rollouts dynamic.ResourceInterface, revision int) *appsv1.ReplicaSet {
	t.Helper()
	ro, err := rollouts.Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := unstructured.NestedMap(ro.Object, "spec", "template")
	if err != nil {
		t.Fatal(err)
	}
	var template corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &template); err != nil {
		t.Fatal(err)
	}
	hash := fmt.Sprintf("rev%d", revision)
	template.Labels[rolloutHashLabel] = hash
	controller := true
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "web-" + hash,
			Labels:          map[string]string{"app": "web", rolloutHashLabel: hash},
			Annotations:     map[string]string{rolloutRevisionAnnotation: fmt.Sprint(revision)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "web", UID: ro.GetUID(), Controller: &controller, BlockOwnerDeletion: &controller}},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", rolloutHashLabel: hash}},
			Template: template,
		},
	}
	made, err := f.Client.AppsV1().ReplicaSets(f.Namespace).Create(t.Context(), rs, metav1.CreateOptions{FieldManager: "rollouts-controller"})
	if err != nil {
		t.Fatalf("making the Rollout's ReplicaSet of revision %d: %v", revision, err)
	}
	return made
}

// restConfig is the admin's client configuration with userAgent, from
// which the API server names the field manager of a write without one.
func restConfig(t *testing.T, userAgent string) *rest.Config {
	t.Helper()
	cfg, err := framework.ControlPlane(t).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserAgent = userAgent
	return cfg
}
