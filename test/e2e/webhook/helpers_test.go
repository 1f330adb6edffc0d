package webhook_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const seeds = "../seeds/testdata/"

func resourceVersion(t *testing.T, k framework.Kubectl, object string) string {
	t.Helper()
	return k.JSONPath(t, object, "{.metadata.resourceVersion}")
}
