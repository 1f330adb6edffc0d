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

// applyPredicted runs `kubectl apply -f file` as k after `kubectl hygiene
// diff` predicted it, and requires the prediction to be exactly what
// kubectl printed (framework.Predictor).
func applyPredicted(t *testing.T, k framework.Kubectl, file string) framework.Result {
	t.Helper()
	return framework.NewPredictor(t).Apply(t, k, file)
}
