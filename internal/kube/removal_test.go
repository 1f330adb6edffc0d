package kube

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

var servicesGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// nodePortService is a Service a person patched to NodePort: the server
// defaulted externalTrafficPolicy and allocated a node port.
func nodePortService() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{
			"name": "web", "namespace": "shop", "resourceVersion": "7",
			"annotations":   map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"kind":"Service"}`},
			"managedFields": []any{map[string]any{"manager": "kubectl-patch", "operation": "Update"}},
		},
		"spec": map[string]any{
			"type": "NodePort", "externalTrafficPolicy": "Cluster",
			"ports": []any{
				map[string]any{"port": int64(80), "protocol": "TCP", "nodePort": int64(30080)},
				map[string]any{"port": int64(443), "protocol": "TCP", "nodePort": int64(30443)},
			},
		},
	}}
}

// answer is what the fake API server stores for a dry run: the object the
// patch made, changed by edit (the server's defaulting), or err.
type answer struct {
	edit func(obj map[string]any)
	err  error
}

func TestRemovalSticks(t *testing.T) {
	tests := map[string]struct {
		pointer string
		answer  answer
		want    RemovalVerdict
		wantErr bool
		// uncached: the verdict is not kept for the same question.
		uncached bool
	}{
		"a default the server puts back (externalTrafficPolicy: Cluster)": {
			pointer: "/spec/externalTrafficPolicy",
			answer:  answer{edit: func(obj map[string]any) { specOf(obj)["externalTrafficPolicy"] = "Cluster" }},
			want:    RemovalPutBack,
		},
		"a value the server leaves out: the removal sticks": {
			pointer: "/spec/externalTrafficPolicy",
			answer:  answer{edit: func(map[string]any) {}},
			want:    RemovalSticks,
		},
		"another value in its place: the removal changes it, so it sticks": {
			pointer: "/spec/externalTrafficPolicy",
			answer:  answer{edit: func(obj map[string]any) { specOf(obj)["externalTrafficPolicy"] = "Local" }},
			want:    RemovalSticks,
		},
		"a list element the server puts back at another index": {
			pointer: "/spec/ports/0",
			answer: answer{edit: func(obj map[string]any) {
				specOf(obj)["ports"] = append(specOf(obj)["ports"].([]any), map[string]any{"port": int64(80), "protocol": "TCP", "nodePort": int64(30080)})
			}},
			want: RemovalPutBack,
		},
		"a removal the server refuses (422 naming the field)": {
			pointer: "/spec/externalTrafficPolicy",
			answer:  answer{err: invalid(field.Required(field.NewPath("spec", "externalTrafficPolicy"), ""))},
			want:    RemovalRejected,
		},
		"a removal the server refuses (422 naming its list)": {
			pointer: "/spec/ports/0",
			answer:  answer{err: invalid(field.Required(field.NewPath("spec", "ports"), ""))},
			want:    RemovalRejected,
		},
		"a removal the server refuses (422 naming the element that moved up)": {
			pointer: "/spec/ports/0",
			answer:  answer{err: invalid(field.Duplicate(field.NewPath("spec", "ports").Index(1).Child("nodePort"), 30080))},
			want:    RemovalRejected,
		},
		"a 422 without causes (a ValidatingAdmissionPolicy's denial): refused, not kept": {
			pointer:  "/spec/externalTrafficPolicy",
			answer:   answer{err: apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "web", nil)},
			want:     RemovalRejected,
			uncached: true,
		},
		"a 422 about another field (the write itself invalid): refused, not kept": {
			pointer:  "/spec/externalTrafficPolicy",
			answer:   answer{err: invalid(field.Invalid(field.NewPath("spec", "selector"), "web", "field is immutable"))},
			want:     RemovalRejected,
			uncached: true,
		},
		"a 422 naming a grand-parent (a claim's spec is immutable): refused, not kept": {
			pointer:  "/spec/ports/0/nodePort",
			answer:   answer{err: invalid(field.Forbidden(field.NewPath("spec"), "spec is immutable after creation"))},
			want:     RemovalRejected,
			uncached: true,
		},
		"a 422 about an earlier element of the list: refused, not kept": {
			pointer:  "/spec/ports/1",
			answer:   answer{err: invalid(field.Invalid(field.NewPath("spec", "ports").Index(0).Child("port"), 0, "must be between 1 and 65535"))},
			want:     RemovalRejected,
			uncached: true,
		},
		"a dry run the server forbids: no verdict": {
			pointer: "/spec/externalTrafficPolicy",
			answer:  answer{err: apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New("no patch"))},
			wantErr: true,
		},
		"a pointer to nothing: no verdict, no request": {
			pointer: "/spec/sessionAffinityConfig",
			wantErr: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client, requests := fakeServer(t, tc.answer)
			var outcomes []string
			c := NewCluster(client, 0, WithRemovalObserver(func(o string) { outcomes = append(outcomes, o) }))
			live := nodePortService()
			got, err := c.RemovalSticks(t.Context(), servicesGVR, live, live.DeepCopy(), tc.pointer)
			if (err != nil) != tc.wantErr {
				t.Fatalf("RemovalSticks error = %v, want error %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if tc.answer.edit == nil && tc.answer.err == nil {
				if len(*requests) != 0 {
					t.Errorf("%d requests, want none", len(*requests))
				}
				return
			}
			// The same question again is answered from the cache.
			again, err := c.RemovalSticks(t.Context(), servicesGVR, live, live.DeepCopy(), tc.pointer)
			wantRequests := 1
			if tc.wantErr || tc.uncached {
				wantRequests = 2 // errors and refusals about other fields are not kept
			}
			if !tc.wantErr && (err != nil || again != got) {
				t.Errorf("second RemovalSticks = %q, %v, want %q from the cache", again, err, got)
			}
			if len(*requests) != wantRequests {
				t.Errorf("%d requests, want %d", len(*requests), wantRequests)
			}
			if !tc.wantErr && !tc.uncached && outcomes[len(outcomes)-1] != "cached" {
				t.Errorf("outcomes %q, want the second cached", outcomes)
			}
		})
	}
}

// A Secret is never patched: no request, no verdict.
func TestRemovalSticksNeverPatchesSecrets(t *testing.T) {
	client, requests := fakeServer(t, answer{edit: func(map[string]any) {}})
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "shop"}, "data": map[string]any{"old": "c2VjcmV0"}}}
	_, err := NewCluster(client, 0).RemovalSticks(t.Context(), schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, secret, secret, "/data/old")
	if !errors.Is(err, ErrNoRemovalProof) {
		t.Errorf("error = %v, want ErrNoRemovalProof", err)
	}
	if len(*requests) != 0 {
		t.Errorf("%d requests, want none", len(*requests))
	}
}

// The dry run patches the object as stored into the object after the write
// minus the field: dryRun=All, apply-hygiene's field manager, neither
// managedFields nor resourceVersion, and last-applied as stored.
func TestRemovalSticksSendsADryRunOfTheRemoval(t *testing.T) {
	client, requests := fakeServer(t, answer{edit: func(map[string]any) {}})
	live := nodePortService()
	target := live.DeepCopy()
	target.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"kind":"Service","new":true}`})
	target.SetLabels(map[string]string{"release": "v2"})
	if _, err := NewCluster(client, 0).RemovalSticks(t.Context(), servicesGVR, live, target, "/spec/externalTrafficPolicy"); err != nil {
		t.Fatal(err)
	}
	if len(*requests) != 1 {
		t.Fatalf("%d requests, want 1", len(*requests))
	}
	patch := (*requests)[0]
	if diff := cmp.Diff([]string{metav1.DryRunAll}, patch.opts.DryRun); diff != "" {
		t.Errorf("dryRun (-want +got):\n%s", diff)
	}
	if patch.opts.FieldManager != DryRunFieldManager {
		t.Errorf("field manager %q, want %q", patch.opts.FieldManager, DryRunFieldManager)
	}
	want := `{"metadata":{"labels":{"release":"v2"}},"spec":{"externalTrafficPolicy":null}}`
	if diff := cmp.Diff(want, string(patch.body)); diff != "" {
		t.Errorf("merge patch (-want +got):\n%s", diff)
	}
}

// The fields to remove with the field (merge.RemovedWith) go in the same
// dry run: a serviceAccountName alone would come back from its
// deprecated alias.
func TestRemovalSticksRemovesTheFieldsWithIt(t *testing.T) {
	client, requests := fakeServer(t, answer{edit: func(map[string]any) {}})
	live := nodePortService()
	if _, err := NewCluster(client, 0).RemovalSticks(t.Context(), servicesGVR, live, live, "/spec/externalTrafficPolicy", "/spec/type"); err != nil {
		t.Fatal(err)
	}
	if len(*requests) != 1 {
		t.Fatalf("%d requests, want 1", len(*requests))
	}
	want := `{"spec":{"externalTrafficPolicy":null,"type":null}}`
	if diff := cmp.Diff(want, string((*requests)[0].body)); diff != "" {
		t.Errorf("merge patch (-want +got):\n%s", diff)
	}
}

// The key of a verdict holds the discriminators on the way to the field:
// the same field and value under another type is asked again.
func TestRemovalKeyHoldsTheDiscriminators(t *testing.T) {
	a := nodePortService()
	b := nodePortService()
	if err := unstructured.SetNestedField(b.Object, "LoadBalancer", "spec", "type"); err != nil {
		t.Fatal(err)
	}
	c := nodePortService()
	c.SetResourceVersion("8")
	tokens := []string{"spec", "externalTrafficPolicy"}
	key := func(obj *unstructured.Unstructured) string {
		k, err := removalKey(servicesGVR, nodePortService(), obj, tokens, nil)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if key(a) == key(b) {
		t.Error("the same key for type NodePort and LoadBalancer")
	}
	if key(a) != key(c) {
		t.Error("another key for another resourceVersion")
	}
}

// The key of a verdict holds the object: its name, labels and annotations,
// which mutating policies select on (a Kyverno policy that injects env
// only into Deployments labelled otel=on). The verdict of one object is
// not another's, nor the same object's under other labels; last-applied,
// which the dry run replaces by the stored one, is left out.
func TestRemovalKeyHoldsTheObject(t *testing.T) {
	tokens := []string{"spec", "externalTrafficPolicy"}
	key := func(obj *unstructured.Unstructured) string {
		k, err := removalKey(servicesGVR, nodePortService(), obj, tokens, nil)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key(nodePortService())
	tests := map[string]struct {
		edit     func(obj *unstructured.Unstructured)
		wantSame bool
	}{
		"another object of the same shape": {edit: func(obj *unstructured.Unstructured) { obj.SetName("api") }},
		"the same object with another label": {edit: func(obj *unstructured.Unstructured) {
			obj.SetLabels(map[string]string{"otel": "on"})
		}},
		"the same object with another annotation": {edit: func(obj *unstructured.Unstructured) {
			a := obj.GetAnnotations()
			a["inject"] = "true"
			obj.SetAnnotations(a)
		}},
		"the same object with another last-applied": {wantSame: true, edit: func(obj *unstructured.Unstructured) {
			obj.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"kind":"Service","v":2}`})
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := nodePortService()
			tc.edit(obj)
			if got := key(obj) == base; got != tc.wantSame {
				t.Errorf("same key as the original: %t, want %t", got, tc.wantSame)
			}
		})
	}
}

// invalid is a 422 Invalid answer about a Service with the causes errs.
func invalid(errs ...*field.Error) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "web", field.ErrorList(errs))
}

func specOf(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

// sentPatch is one patch the fake server received.
type sentPatch struct {
	body []byte
	opts metav1.PatchOptions
}

// fakeServer answers every patch of a Service with a: the patched object
// (the patch applied to nodePortService), edited, or a's error.
func fakeServer(t *testing.T, a answer) (*dynamicfake.FakeDynamicClient, *[]sentPatch) {
	t.Helper()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{servicesGVR: "ServiceList"})
	var sent []sentPatch
	client.PrependReactor("patch", "services", func(action clienttesting.Action) (bool, runtime.Object, error) {
		p := action.(clienttesting.PatchActionImpl)
		sent = append(sent, sentPatch{body: p.GetPatch(), opts: p.PatchOptions})
		if a.err != nil {
			return true, nil, a.err
		}
		obj := nodePortService()
		var patch map[string]any
		if err := json.Unmarshal(p.GetPatch(), &patch); err != nil {
			t.Fatal(err)
		}
		merged := mergePatch(obj.Object, patch)
		a.edit(merged)
		return true, &unstructured.Unstructured{Object: merged}, nil
	})
	return client, &sent
}

// mergePatch applies an RFC 7386 merge patch to obj.
func mergePatch(obj, patch map[string]any) map[string]any {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(obj, k)
		case map[string]any:
			cur, _ := obj[k].(map[string]any)
			if cur == nil {
				cur = map[string]any{}
			}
			obj[k] = mergePatch(cur, pv)
		default:
			obj[k] = pv
		}
	}
	return obj
}

func TestFieldPathTokens(t *testing.T) {
	tests := map[string]struct {
		path string
		want []string
	}{
		"fields":                          {path: "spec.externalTrafficPolicy", want: []string{"spec", "externalTrafficPolicy"}},
		"a list index":                    {path: "spec.ports[0].nodePort", want: []string{"spec", "ports", "0", "nodePort"}},
		"a map key with dots and slashes": {path: "metadata.labels[app.kubernetes.io/name]", want: []string{"metadata", "labels", "app.kubernetes.io/name"}},
		"nothing":                         {path: "", want: nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fieldPathTokens(tc.path)); diff != "" {
				t.Errorf("fieldPathTokens(%q) (-want +got):\n%s", tc.path, diff)
			}
		})
	}
}
