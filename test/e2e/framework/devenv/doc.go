// Package devenv runs apply-hygiene as a local process against a local
// control plane, installed the way users install it: the Helm chart in url
// mode renders the webhook configurations (pointing at the local process,
// with the control plane's CA as caBundle), the RBAC, the service account
// and the policy ConfigMap; the process runs with a token of the chart's
// service account, so it has exactly the chart's permissions.
//
// `make dev-up` (hack/cluster up --webhook) and the e2e framework use it.
package devenv
