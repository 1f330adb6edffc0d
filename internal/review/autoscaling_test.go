package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// cluster is a Cluster with the autoscalers of the tests.
type cluster struct {
	hpas []*autoscalingv2.HorizontalPodAutoscaler
	err  error
}

func (cluster) Object(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return nil, fmt.Errorf("reading %s %s/%s: not found", gvr.Resource, namespace, name)
}

func (cluster) Revisions(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (cluster) NamespaceLabels(context.Context, string) (map[string]string, error) {
	return map[string]string{}, nil
}

func (c cluster) Autoscalers(context.Context, *unstructured.Unstructured) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	return c.hpas, c.err
}

// noAutoscalers is a Cluster without the Autoscalers method.
type noAutoscalers struct{ cluster }

func (noAutoscalers) Autoscalers() {}

var webHPA = &autoscalingv2.HorizontalPodAutoscaler{
	ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
	Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 10,
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
	Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 4, DesiredReplicas: 4},
}

// web is Deployment shop/web with spec.replicas and the last-applied of a
// manifest with manifestReplicas (none when nil).
func web(t *testing.T, replicas int64, manifestReplicas any) *unstructured.Unstructured {
	t.Helper()
	spec := map[string]any{}
	if manifestReplicas != nil {
		spec["replicas"] = manifestReplicas
	}
	la, err := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop"}, "spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": replicas}}}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetNamespace("shop")
	obj.SetName("web")
	obj.SetAnnotations(map[string]string{lastAppliedAnnotation: string(la) + "\n"})
	return obj
}

func engine(t *testing.T, cfg policy.Config) *policy.Engine {
	t.Helper()
	e, err := policy.New(t.Context(), policy.WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func apply(old, new *unstructured.Unstructured) Update {
	return Update{FieldManager: merge.ClientSideApplyManager, User: authenticationv1.UserInfo{Username: "alice"}, Old: old, New: new}
}

func decisionsOf(rv *Review) []string {
	var out []string
	if rv == nil {
		return out
	}
	for _, d := range rv.Decisions {
		out = append(out, string(d.Action)+" "+d.Message)
	}
	return out
}

const autoscaledWarning = "warn [replicas-autoscaled] Deployment shop/web: the manifest sets spec.replicas to 3, but HorizontalPodAutoscaler web scales this Deployment " +
	"(it wants 4 replicas now, between 2 and 10), so every apply fights the autoscaler: it sets the count back to 3 and the autoscaler scales it again. " +
	"Drop replicas from the manifest to leave them to the autoscaler; that apply is replicas-reset's hand-over (its repair action keeps the live count)."

func TestAutoscaledApply(t *testing.T) {
	tests := map[string]struct {
		cluster          Cluster
		manifestReplicas any
		want             []string
		wantFact         *policy.Autoscaling
	}{
		"a manifest with replicas while an HPA scales the Deployment": {
			cluster: cluster{hpas: []*autoscalingv2.HorizontalPodAutoscaler{webHPA}}, manifestReplicas: int64(3),
			want: []string{autoscaledWarning},
			wantFact: &policy.Autoscaling{ManifestReplicas: float64(3), Autoscalers: []policy.Autoscaler{
				{Name: "web", MinReplicas: 2, MaxReplicas: 10, CurrentReplicas: 4, DesiredReplicas: 4}}},
		},
		"a manifest without replicas": {
			cluster: cluster{hpas: []*autoscalingv2.HorizontalPodAutoscaler{webHPA}},
			wantFact: &policy.Autoscaling{Autoscalers: []policy.Autoscaler{
				{Name: "web", MinReplicas: 2, MaxReplicas: 10, CurrentReplicas: 4, DesiredReplicas: 4}}},
		},
		"no HPA":                             {cluster: cluster{}, manifestReplicas: int64(3)},
		"the cache has not synced: no fact":  {cluster: cluster{err: errors.New("not synced")}, manifestReplicas: int64(3)},
		"a cluster that cannot look them up": {cluster: noAutoscalers{}, manifestReplicas: int64(3)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewReviewer(nil, engine(t, policy.Config{}), tc.cluster)
			old := web(t, 3, tc.manifestReplicas)
			new := web(t, 3, tc.manifestReplicas)
			new.SetLabels(map[string]string{"v": "2"}) // a change, so that last-applied differs
			new.SetAnnotations(map[string]string{lastAppliedAnnotation: strings.Replace(new.GetAnnotations()[lastAppliedAnnotation], `"metadata":{`, `"metadata":{"labels":{"v":"2"},`, 1)})
			rv, err := r.ReviewUpdate(t.Context(), apply(old, new), Validate)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, decisionsOf(rv)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFact, rv.Input.Autoscaling); diff != "" {
				t.Errorf("input.autoscaling (-want +got):\n%s", diff)
			}
		})
	}
}
