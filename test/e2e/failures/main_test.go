// Package failures_test proves rows of the failure table of
// docs/operations.md with a real control plane, the chart and real kubectl:
// the API server slow to answer the server's reads (a proxy between them
// holds every answer back while a test says so), the server's serving
// certificate expired, and a policy ConfigMap broken (not compiling, or
// failing at evaluation); each under failurePolicy Ignore and Fail,
// asserted as the exact lines kubectl prints.
package failures_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// apiServer is the proxy through which the server reaches the API server.
var apiServer *slowProxy

// fastStop is the server flag that skips the graceful shutdown's delay:
// the tests restart servers often and no load balancer needs the time.
const fastStop = "--shutdown-delay=0s"

func TestMain(m *testing.M) {
	code := framework.Run(m, framework.WithWebhook(), framework.WithServerArgs(fastStop), framework.WithAPIServerFor(func(url string) (string, error) {
		p, err := startSlowProxy(url)
		if err != nil {
			return "", err
		}
		apiServer = p
		return p.URL(), nil
	}))
	if apiServer != nil {
		if err := apiServer.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the API server proxy:", err)
		}
	}
	os.Exit(code)
}
