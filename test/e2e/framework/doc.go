// Package framework is the end-to-end test harness: one real control plane
// per test package (started from TestMain with Main), a namespace per test,
// and real kubectl runs whose stdout, stderr and exit code the tests assert.
//
// A test package's TestMain calls Main; a test calls New(t) to get its
// namespace and a Kubectl bound to it:
//
//	func TestMain(m *testing.M) { framework.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		f := framework.New(t)
//		f.Kubectl.Run(t, "apply", "-f", "testdata/x.yaml").MustSucceed(t)
//	}
//
// Packages share a control plane where their tests do not conflict: a
// package whose tests need the webhook configured in different ways
// starts none in TestMain and runs each group of tests under UseWebhook
// (test/e2e/audit); a test that needs other chart values for a while calls
// Reconfigure or WithFailurePolicy, which put the package's values back.
//
// When the control plane binaries are missing (hack/tools/build.sh was not
// run), New skips with the names of the missing tools, unless
// APPLY_HYGIENE_E2E=required (set by make test), in which case it fails.
//
// WithNode runs a real node instead of a control plane alone (hack/node),
// for test/e2e/node: there the tests skip, naming why, on a machine that
// can never run a node (not root, no cgroups), even when required.
package framework
