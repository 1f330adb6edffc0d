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

// applyPredicted runs `kubectl apply -f file` as k after `kubectl hygiene
// diff` predicted it, and requires the prediction to be exactly what
// kubectl printed (framework.Predictor).
func applyPredicted(t *testing.T, k framework.Kubectl, file string) framework.Result {
	t.Helper()
	return framework.NewPredictor(t).Apply(t, k, file)
}
