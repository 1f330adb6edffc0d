package generative_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// meshStamp is the annotation the second mutating webhook, a mesh
// injector, stamps on every object it sees created or changed.
const meshStamp = "mesh.example.com/injected-revision"

// meshStamped reports whether q is the mesh injector's stamp: a robot's
// field, whoever's write it rode on (never a person's orphan, never a
// field a person moved).
func meshStamped(q fieldPath) bool {
	return q.String() == meshPath.String()
}

// meshPath is meshStamp's field.
var meshPath = framework.Path("metadata", "annotations").Key(meshStamp)

// meshInjector is a second mutating webhook, as a service mesh's sidecar
// injector runs one: it stamps meshStamp with a counter on every create,
// and on every update that changes the object (a write that changes
// nothing stays a no-op). Registered with reinvocationPolicy IfNeeded,
// as injectors that must see the final object are, and failurePolicy
// Fail; its configuration's name sorts after apply-hygiene's, so the API
// server calls it after apply-hygiene's mutating webhook.
type meshInjector struct {
	count atomic.Int64
}

// startMesh serves the mesh injector over TLS with a serving certificate
// of the control plane's CA (as apply-hygiene's own webhook in devenv) and
// registers it for the kinds the sequences write, in every namespace but
// kube-system.
func startMesh(t *testing.T, f *framework.Framework) {
	t.Helper()
	cp := framework.ControlPlane(t)
	certPEM, keyPEM, err := cp.ServingCert()
	if err != nil {
		t.Fatalf("issuing the mesh injector's certificate: %v", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("loading the mesh injector's certificate: %v", err)
	}
	srv := httptest.NewUnstartedServer(&meshInjector{})
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	url := srv.URL + "/inject"
	rule := func(group string, resources ...string) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: resources},
		}
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "mesh-injector"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         "inject.mesh.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: cp.CAPEM()},
			Rules: []admissionregistrationv1.RuleWithOperations{
				rule("apps", "deployments", "statefulsets", "daemonsets"), rule("", "services", "configmaps"),
			},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"},
			}}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			ReinvocationPolicy:      ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
			TimeoutSeconds:          ptr.To[int32](10),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	api := f.Client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if _, err := api.Create(t.Context(), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("registering the mesh injector: %v", err)
	}
	t.Cleanup(func() {
		if err := api.Delete(context.Background(), cfg.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("removing the mesh injector: %v", err)
		}
	})
	probe := framework.New(t)
	framework.Eventually(t, 30*time.Second, "the mesh injector", func(context.Context) (bool, error) {
		res := probe.Kubectl.Run(t, "create", "configmap", "mesh-probe", "--dry-run=server", "-o", "jsonpath={.metadata.annotations}")
		return bytes.Contains([]byte(res.Stdout), []byte(meshStamp)), nil
	})
}

func (m *meshInjector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	if patch := m.patch(review.Request); patch != nil {
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	}
	review.Request, review.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// patch is the JSON patch that stamps a new object or an update that
// changed it; nil for an update that changes nothing.
func (m *meshInjector) patch(req *admissionv1.AdmissionRequest) []byte {
	var obj map[string]any
	if json.Unmarshal(req.Object.Raw, &obj) != nil {
		return nil
	}
	if len(req.OldObject.Raw) > 0 {
		var old map[string]any
		if json.Unmarshal(req.OldObject.Raw, &old) != nil || bytes.Equal(unstampedJSON(old), unstampedJSON(obj)) {
			return nil
		}
	}
	value := strconv.FormatInt(m.count.Add(1), 10)
	op := map[string]any{"op": "add", "path": "/metadata/annotations/mesh.example.com~1injected-revision", "value": value}
	if _, ok := framework.Path("metadata", "annotations").Lookup(obj); !ok {
		op = map[string]any{"op": "add", "path": "/metadata/annotations", "value": map[string]string{meshStamp: value}}
	}
	raw, _ := json.Marshal([]any{op})
	return raw
}

// unstampedJSON encodes obj without its stamp, status and the metadata
// the server keeps, for comparing.
func unstampedJSON(obj map[string]any) []byte {
	out := map[string]any{}
	for k, v := range obj {
		if k != "status" && k != "metadata" {
			out[k] = v
		}
	}
	meta, _ := obj["metadata"].(map[string]any)
	kept := map[string]any{}
	for k, v := range meta {
		switch k {
		case "resourceVersion", "managedFields", "generation":
		case "annotations":
			a := map[string]any{}
			all, _ := v.(map[string]any)
			for ak, av := range all {
				if ak != meshStamp {
					a[ak] = av
				}
			}
			kept[k] = a
		default:
			kept[k] = v
		}
	}
	out["metadata"] = kept
	raw, _ := json.Marshal(out)
	return raw
}

// recordMesh records the mesh injector's stamp as a robot's field when a
// write changed it: the injector set it, in the write of whoever wrote,
// also in an apply's or a save-config's (which take back only what they
// set themselves).
func (r *runner) recordMesh(before, after map[string]any) {
	if before == nil || after == nil {
		return
	}
	for _, q := range changed(before, after) {
		if _, live := q.Lookup(after); live && meshStamped(q) {
			r.fields[q.String()] = setField{path: q}
		}
	}
}

// meshOwnedByUndo reports whether obj's managedFields (the API server's
// record, not apply-hygiene's reading of it) give the mesh's stamp to
// kubectl rollout undo's entry alone (manager kubectl, Update, no
// subresource): the undo copied it from the ReplicaSet, the mesh's later
// stamps do not move ownership (the API server tracks a write before
// mutating admission), so from then on the record says a person set it,
// and a write the mesh leaves alone tells nothing else. An orphaned-field
// finding of it is then allowed, not required (soak seed 271126, sequence
// 016: Argo CD's server-side apply that changed nothing).
func meshOwnedByUndo(obj map[string]any) bool {
	owners := 0
	for _, m := range entriesOf(obj) {
		fields, _ := m["fieldsV1"].(map[string]any)
		meta, _ := fields["f:metadata"].(map[string]any)
		annotations, _ := meta["f:annotations"].(map[string]any)
		if _, ok := annotations["f:"+meshStamp]; !ok {
			continue
		}
		owners++
		if m["manager"] != "kubectl" || m["operation"] != "Update" || m["subresource"] != nil {
			return false
		}
	}
	return owners > 0
}

// meshAllowed are the orphans an apply or server-side apply may report at
// the mesh's stamp as well: the stamp itself when meshOwnedByUndo(before).
func meshAllowed(before map[string]any) []fieldPath {
	if meshOwnedByUndo(before) {
		return []fieldPath{meshPath}
	}
	return nil
}
