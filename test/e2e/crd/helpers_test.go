package crd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// installCRD applies the CRD in file and waits until it is established
// and the API server's OpenAPI v3 document of example.com/v1 has want.
func installCRD(t *testing.T, k framework.Kubectl, file, want string) {
	t.Helper()
	k.Run(t, "apply", "-f", file).MustSucceed(t)
	k.Run(t, "wait", "--for=condition=Established", "crd/routes.example.com", "--timeout=60s").MustSucceed(t)
	framework.Eventually(t, time.Minute, "the OpenAPI v3 document of example.com/v1 to have "+want, func(context.Context) (bool, error) {
		res := k.Run(t, "get", "--raw", "/openapi/v3/apis/example.com/v1")
		return res.ExitCode == 0 && strings.Contains(res.Stdout, want), nil
	})
}
