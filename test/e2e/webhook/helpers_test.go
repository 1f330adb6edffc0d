package webhook_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const seeds = "../seeds/testdata/"

// userFields is what a user's write of object changes and the
// controllers' writes do not (a Deployment's status, its revision
// annotation): the generation, the labels and the spec.
func userFields(t *testing.T, k framework.Kubectl, object string) string {
	t.Helper()
	return k.JSONPath(t, object, "{.metadata.generation} {.metadata.labels} {.spec}")
}
