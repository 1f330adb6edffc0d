// Package chart tests the Helm chart in charts/apply-hygiene: golden
// snapshots of `helm template` for each install mode (testdata/<case>/,
// regenerate with `go test ./test/chart -update`), `helm lint`, the values
// schema, the documentation of every value (and the README table generated
// from it), the exact RBAC rules, and server-side dry runs of every
// rendered manifest against a real API server started with
// test/e2e/framework/controlplane, with cert-manager's own CRDs installed; promtool's
// checks and unit tests of the PrometheusRule's alerts
// (testdata/promtool), and the Grafana dashboard's ConfigMap.
//
// The tests exec the pinned helm, kubectl and promtool from .cache/bin
// (make tools).
// Without them the tests skip, naming the missing binary, unless
// APPLY_HYGIENE_E2E=required, which turns the skip into a failure.
package chart
