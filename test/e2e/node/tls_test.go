package node_test

import (
	"encoding/base64"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Self-managed TLS from inside the Pods: the server minted its CA and
// serving certificate into the Secret, and injected that CA as the
// caBundle of both webhook configurations, which call the chart's Service.
func TestSelfManagedTLSMintsTheSecretAndInjectsTheCABundle(t *testing.T) {
	admin := installed(t)
	keys := admin.Run(t, "get", "secret", "apply-hygiene-tls", "-o",
		`go-template={{range $k, $v := .data}}{{$k}}{{"\n"}}{{end}}`).MustSucceed(t)
	framework.WantLines(t, keys.Stdout, "ca.crt", "tls.crt", "tls.key")
	caCert := admin.JSONPath(t, "secret/apply-hygiene-tls", `{.data.ca\.crt}`)
	if _, err := base64.StdEncoding.DecodeString(caCert); err != nil || caCert == "" {
		t.Fatalf("Secret ca.crt = %q: %v", caCert, err)
	}
	for _, kind := range []string{"mutatingwebhookconfiguration", "validatingwebhookconfiguration"} {
		got := admin.Run(t, "get", kind, release, "-o",
			`jsonpath={range .webhooks[*]}{.name} {.clientConfig.service.namespace}/{.clientConfig.service.name}:{.clientConfig.service.port} {.clientConfig.url}{"\n"}{end}`).MustSucceed(t)
		framework.WantMatch(t, got.Stdout, `^[a-z]+\.apply-hygiene\.io apply-hygiene/apply-hygiene:443 $`)
		bundle := admin.JSONPath(t, kind+"/"+release, "{.webhooks[0].clientConfig.caBundle}")
		if bundle != caCert {
			t.Errorf("%s caBundle is not the Secret's ca.crt:\n%s\nwant\n%s", kind, bundle, caCert)
		}
	}
}
