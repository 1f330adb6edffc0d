package secrets_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// TestSetLastAppliedHandOverOfASecretKeyIsRecorded hands a Secret's key
// over with kubectl apply set-last-applied of a manifest without it:
// last-applied holds the manifest's stringData, the object its data,
// and the record names the key as stored (data.token). A person's
// rotation of the key then passes, the next apply of the manifest prints
// nothing and keeps the rotated value, explain and the audit find
// nothing, and no value of the key reaches the server's log.
func TestSetLastAppliedHandOverOfASecretKeyIsRecorded(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/secret-creds-v1.yaml").MustSucceed(t)
	handOver := k.Run(t, "apply", "set-last-applied", "-f", "testdata/secret-creds-user-only.yaml").MustSucceed(t)
	framework.WantLines(t, handOver.Stdout, "secret/creds configured")
	framework.WantLines(t, handOver.Stderr)
	framework.WantLines(t, k.JSONPath(t, "secret/creds", `{.metadata.annotations.apply-hygiene\.io/handed-over}`), `["data.token"]`)

	rotate := k.Run(t, "patch", "secret/creds", "--type=merge", "-p", `{"stringData":{"token":"rotated-e2e-token"}}`).MustSucceed(t)
	framework.WantLines(t, rotate.Stdout, "secret/creds patched")
	framework.WantLines(t, rotate.Stderr)

	apply := framework.ApplyPredicted(t, k, "testdata/secret-creds-user-only.yaml").MustSucceed(t)
	// stringData is write-only: every apply sends it again.
	framework.WantLines(t, apply.Stdout, "secret/creds configured")
	framework.WantLines(t, apply.Stderr)
	framework.WantLines(t, k.JSONPath(t, "secret/creds", `{.data.token} {.data.user} {.metadata.annotations.apply-hygiene\.io/handed-over}`),
		base64.StdEncoding.EncodeToString([]byte("rotated-e2e-token"))+" "+base64.StdEncoding.EncodeToString([]byte("admin"))+` ["data.token"]`)

	explain := f.Hygiene(t, "explain", "secret/creds", "-n", f.Namespace).MustSucceed(t)
	if !strings.HasSuffix(strings.TrimSpace(explain.Stdout), "\nNo findings.") {
		t.Errorf("kubectl hygiene explain finds something:\n%s", explain.Stdout)
	}
	audit := f.Hygiene(t, "audit", "-n", f.Namespace, "--kind", "secrets").MustSucceed(t)
	framework.WantLines(t, audit.Stdout, "No findings in 1 objects.")
	for _, value := range []string{"first-e2e-token", "rotated-e2e-token"} {
		if log := framework.ServerLog(t); strings.Contains(log, value) || strings.Contains(log, base64.StdEncoding.EncodeToString([]byte(value))) {
			t.Errorf("the server log holds the Secret's value %q", value)
		}
	}
}
