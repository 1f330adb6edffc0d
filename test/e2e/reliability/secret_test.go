package reliability_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// A Secret's values never leave the Secret: with Secrets reviewed by
// apply-hygiene, a Secret is applied, edited (denied for a person, warned
// for a service account), and applied again over the edit, and no canary
// value — as text or base64 — appears in kubectl's output (denials,
// warnings), `kubectl hygiene audit`, the server's log, its metrics or any
// event.
func TestSecretValuesAppearNowhere(t *testing.T) {
	f := framework.New(t)
	reviewSecrets(t, f)
	canary := func(what string) string { return "canary-" + what + "-" + randomHex(t) }
	tokenV1, passwordV1, tokenEdit, tokenV2, passwordV2 := canary("token1"), canary("password1"), canary("token-edit"), canary("token2"), canary("password2")
	secrets := []string{tokenV1, passwordV1, tokenEdit, tokenV2, passwordV2}
	var outputs []framework.Result
	k := f.Kubectl

	outputs = append(outputs, k.RunWithInput(t, secretManifest(tokenV1, passwordV1), "apply", "-f", "-").MustSucceed(t))
	outputs = append(outputs, k.RunWithInput(t, secretManifest(tokenV1, passwordV1), "apply", "-f", "-").MustSucceed(t))
	editPatch := fmt.Sprintf(`{"data":{"token":%q}}`, b64(tokenEdit))
	outputs = append(outputs, waitReviewingSecrets(t, k, editPatch)...)
	denied := k.Run(t, "patch", "secret/canary", "-p", editPatch).MustFail(t)
	if !strings.Contains(denied.Stderr, `denied the request: [imperative-edit] Secret `+f.Namespace+`/canary: `) {
		t.Errorf("a person's edit of the Secret: stderr %q, want the imperative-edit denial", denied.Stderr)
	}
	outputs = append(outputs, denied)
	robot := f.KubectlAsServiceAccount(t, "deployer")
	warned := robot.Run(t, "patch", "secret/canary", "-p", editPatch).MustSucceed(t)
	if !strings.Contains(warned.Stderr, "Warning: [imperative-edit] Secret ") {
		t.Errorf("a service account's edit of the Secret: stderr %q, want the imperative-edit warning", warned.Stderr)
	}
	outputs = append(outputs, warned)
	reapplied := k.RunWithInput(t, secretManifest(tokenV2, passwordV2), "apply", "-f", "-").MustSucceed(t)
	if !strings.Contains(reapplied.Stderr, "Warning: [apply-reverts-drift] Secret ") {
		t.Errorf("the apply over the edit: stderr %q, want the apply-reverts-drift warning", reapplied.Stderr)
	}
	outputs = append(outputs, reapplied)
	// Drift left for the audit to find: the service account's edit again.
	outputs = append(outputs, robot.Run(t, "patch", "secret/canary", "-p", editPatch).MustSucceed(t))
	for _, output := range []string{"table", "json"} {
		r := f.Hygiene(t, "audit", "-n", f.Namespace, "--kind", "secrets", "-o", output)
		if r.ExitCode > 1 || !strings.Contains(r.Stdout, "canary") {
			t.Errorf("kubectl hygiene audit -o %s: exit %d, want 0 or 1 and findings about secret/canary\n%s%s", output, r.ExitCode, r.Stdout, r.Stderr)
		}
		outputs = append(outputs, r)
	}

	haystacks := map[string]string{"server log": framework.ServerLog(t), "metrics": scrape(t), "events": f.AllEvents(t)}
	for _, r := range outputs {
		haystacks["kubectl "+strings.Join(r.Args, " ")] += r.Stdout + r.Stderr
	}
	for where, text := range haystacks {
		for _, s := range secrets {
			for _, form := range []string{s, b64(s)} {
				if i := strings.Index(text, form); i >= 0 {
					t.Errorf("%s holds the Secret value %q: …%s…", where, form, text[max(0, i-200):min(len(text), i+len(form)+50)])
				}
			}
		}
	}
}

// kubectl apply of a Secret with stringData: the API server moves each
// stringData key into data, so data.<key> is the manifest's, not an
// orphan, and removing it (as the orphaned-field warning suggests, or as
// prune would) deletes the password.
func TestSecretStringDataIsNoOrphan(t *testing.T) {
	f := framework.New(t)
	reviewSecrets(t, f)
	k := f.Kubectl
	k.RunWithInput(t, secretManifest("token-1", "password-1"), "apply", "-f", "-").MustSucceed(t)
	waitReviewingSecrets(t, k, fmt.Sprintf(`{"data":{"token":%q}}`, b64("token-edit")))
	r := k.RunWithInput(t, secretManifest("token-1", "password-2"), "apply", "-f", "-").MustSucceed(t)
	if strings.Contains(r.Stderr, "[orphaned-field]") {
		t.Errorf("an apply that changes stringData.password warns of an orphan:\n%s", r.Stderr)
	}
}

// waitReviewingSecrets waits until apply-hygiene denies a person's dry-run
// edit of secret/canary: webhook configurations take effect
// asynchronously. It returns kubectl's results.
func waitReviewingSecrets(t *testing.T, k framework.Kubectl, editPatch string) []framework.Result {
	t.Helper()
	var results []framework.Result
	framework.Eventually(t, 30*time.Second, "apply-hygiene reviewing Secrets", func(context.Context) (bool, error) {
		r := k.Run(t, "patch", "secret/canary", "--dry-run=server", "-p", editPatch)
		results = append(results, r)
		return r.ExitCode != 0, nil
	})
	return results
}

func secretManifest(token, password string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: canary
type: Opaque
data:
  token: %s
stringData:
  password: %s
`, b64(token), password)
}

// reviewSecrets adds Secrets to both webhook configurations (the chart's
// extraKinds cannot name the core group from --set) and restores them when
// t ends.
func reviewSecrets(t *testing.T, f *framework.Framework) {
	t.Helper()
	ctx := t.Context()
	rule := admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"}},
	}
	arv1 := f.Client.AdmissionregistrationV1()
	mwc, err := arv1.MutatingWebhookConfigurations().Get(ctx, devenv.Release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vwc, err := arv1.ValidatingWebhookConfigurations().Get(ctx, devenv.Release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mRules, vRules := mwc.Webhooks[0].Rules, vwc.Webhooks[0].Rules
	mwc.Webhooks[0].Rules = append(append([]admissionregistrationv1.RuleWithOperations{}, mRules...), rule)
	vwc.Webhooks[0].Rules = append(append([]admissionregistrationv1.RuleWithOperations{}, vRules...), rule)
	if _, err := arv1.MutatingWebhookConfigurations().Update(ctx, mwc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := arv1.ValidatingWebhookConfigurations().Update(ctx, vwc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if m, err := arv1.MutatingWebhookConfigurations().Get(ctx, devenv.Release, metav1.GetOptions{}); err == nil {
			m.Webhooks[0].Rules = mRules
			_, err = arv1.MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{})
			if err != nil {
				t.Errorf("restoring the mutating webhook rules: %v", err)
			}
		}
		if v, err := arv1.ValidatingWebhookConfigurations().Get(ctx, devenv.Release, metav1.GetOptions{}); err == nil {
			v.Webhooks[0].Rules = vRules
			_, err = arv1.ValidatingWebhookConfigurations().Update(ctx, v, metav1.UpdateOptions{})
			if err != nil {
				t.Errorf("restoring the validating webhook rules: %v", err)
			}
		}
	})
}

// scrape is the server's metrics, which must count the webhook's requests.
func scrape(t *testing.T) string {
	t.Helper()
	body := framework.WebhookMetrics(t)
	if !strings.Contains(body, "controller_runtime_webhook_requests_total") {
		t.Fatalf("scraping metrics: no controller_runtime_webhook_requests_total\n%s", body)
	}
	return body
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
