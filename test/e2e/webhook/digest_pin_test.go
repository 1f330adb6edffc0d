package webhook_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// digestPinner is a digest-pinning mutating webhook, as Kyverno's
// verifyImages mutateDigest or sigstore's policy-controller run one: on
// every create and update of a Deployment it pins each container's image
// tag to the tag's current digest. Here the tag moves at every write: the
// digest is a counter, so every write ends with a new digest.
type digestPinner struct {
	count atomic.Int64
}

func (p *digestPinner) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	var obj appsv1.Deployment
	if err := json.Unmarshal(review.Request.Object.Raw, &obj); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	digest := fmt.Sprintf("@sha256:%064x", p.count.Add(1))
	ops := []any{}
	for i, c := range obj.Spec.Template.Spec.Containers {
		tag, _, _ := strings.Cut(c.Image, "@")
		ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/spec/template/spec/containers/%d/image", i), "value": tag + digest})
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true, Patch: patch, PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)}
	review.Request, review.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// An apply of an unchanged manifest behind a digest-pinning webhook:
// kubectl's patch sets the image back to the manifest's tag (live has a
// digest last-applied does not), the webhook pins it to the tag's new
// digest, and the write ends with an image that is neither old's nor
// last-applied's, under kubectl apply's field manager, last-applied
// unchanged. kubectl's own patch set the image: the write is an apply and
// passes without a word (it was denied as an imperative edit).
func TestApplyBehindADigestPinningWebhook(t *testing.T) {
	f := framework.New(t)
	startMutatingWebhook(t, f, "a-pinner-", &digestPinner{}, func(d *appsv1.Deployment) bool {
		return strings.Contains(d.Spec.Template.Spec.Containers[0].Image, "@sha256:")
	})
	k := f.Kubectl
	const manifest = "testdata/deployment-v1.yaml"
	k.Run(t, "apply", "-f", manifest).MustSucceed(t)
	before := k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}")

	apply := k.Run(t, "apply", "-f", manifest).MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
	framework.WantLines(t, apply.Stderr)

	after := k.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}")
	if !strings.HasPrefix(after, "nginx:1.14.2@sha256:") || after == before {
		t.Errorf("image after the apply = %q, want nginx:1.14.2 pinned to a new digest (was %q)", after, before)
	}
}
