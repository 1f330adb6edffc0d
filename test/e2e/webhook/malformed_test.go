package webhook_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The running server answers malformed AdmissionReviews with HTTP 400 and
// a clear message, and goes on deciding real requests.
func TestMalformedReviewsGet400AndServerKeepsServing(t *testing.T) {
	f := framework.New(t)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(framework.ControlPlane(t).CAPEM())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	url := "https://127.0.0.1:" + strconv.Itoa(framework.Webhook(t).Port) + "/validate"
	tests := map[string]struct{ body, want string }{
		"not JSON":   {body: "{{{", want: "the request body is not valid JSON: invalid character '{' looking for beginning of object key string"},
		"no request": {body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, want: "the AdmissionReview has no request"},
		"wrong kind": {body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"UPDATE",` +
			`"kind":{"group":"apps","version":"v1","kind":"Deployment"},"object":{"apiVersion":"v1","kind":"ConfigMap"},"oldObject":{"apiVersion":"v1","kind":"ConfigMap"}}}`,
			want: "object is a ConfigMap (v1), but the request declares Deployment (apps/v1)"},
	}
	for name, tc := range tests {
		resp, err := client.Post(url, "application/json", bytes.NewBufferString(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: HTTP %d %s, want 400 with %q", name, resp.StatusCode, body, tc.want)
		}
	}

	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	res := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustFail(t)
	if !strings.Contains(res.Stderr, framework.DeniedPrefix+"[imperative-edit] ") {
		t.Errorf("after the malformed reviews, set image stderr = %q, want the imperative-edit denial", res.Stderr)
	}
}
