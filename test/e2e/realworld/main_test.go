package realworld_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// TestMain starts the control plane with apply-hygiene installed from the
// chart with its default values, except for the kinds it intercepts: the
// common built-in kinds people kubectl apply (kinds=common), CRDs and the
// custom resources of the corpus's CRDs (extraKinds). The corpus measures
// what a new user who turned them on gets.
func TestMain(m *testing.M) {
	framework.Main(m, framework.WithWebhook(append([]string{"kinds=common"}, extraKindValues...)...))
}

// extraKindValues are the helm values that add CRDs and the corpus's
// custom resources to the intercepted kinds (TestExtraKindValues keeps
// them in step with the corpus).
var extraKindValues = []string{
	"extraKinds[0].group=apiextensions.k8s.io,extraKinds[0].version=v1,extraKinds[0].resource=customresourcedefinitions,extraKinds[0].scope=Cluster",
	"extraKinds[1].group=samplecontroller.k8s.io,extraKinds[1].version=v1alpha1,extraKinds[1].resource=foos",
	"extraKinds[2].group=stable.example.com,extraKinds[2].version=v1,extraKinds[2].resource=shirts",
}
