// Package hatls_test runs two replicas with self-managed TLS and
// failurePolicy Fail, and rotates the certificate while one replica is
// down: the survivor keeps serving, the restarted replica serves the
// shared Secret's certificate, and no write and no handshake fails.
//
// A 60 s certificate renewed 40 s before expiry: a renewal every ~20 s,
// its new CA published 10 s (a quarter of the 40 s) before the new
// certificate is served, and 10 s for every replica to serve it before the
// next renewal drops the CA before.
package hatls_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook("failurePolicy=Fail"), framework.WithReplicas(2),
		framework.WithSelfManagedTLS("--tls-validity=60s", "--tls-renew-before=40s", "--tls-check-interval=1s", "--shutdown-delay=1s"))
}
