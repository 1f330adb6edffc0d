// Package certs keeps the webhook's TLS serving certificate valid without
// cert-manager: the chart's default mode (certManager.enabled=false).
//
// A Manager owns one Secret in the server's namespace holding a private CA
// and a serving certificate for the webhook Service
// (<service>.<namespace>.svc and <service>.<namespace>.svc.cluster.local).
// Every replica runs one; together they:
//
//   - create the Secret when it is missing (replicas that race on the
//     creation read the winner's Secret back), and regenerate the CA and the
//     serving certificate when the Secret is invalid, names other hosts, or
//     expires within Options.RenewBefore;
//   - inject the CA bundle into every webhook of the Mutating and the
//     Validating webhook configuration named Options.WebhookConfigName.
//     During a rotation the bundle is the new CA followed by the previous
//     one, so the API server trusts replicas that still serve the old
//     certificate until they pick up the new one;
//   - write tls.crt and tls.key into Options.CertDir with atomic renames,
//     so controller-runtime's certwatcher reloads them without a restart;
//   - check all of the above again every Options.CheckInterval.
//
// Manager implements controller-runtime's manager.Runnable and
// LeaderElectionRunnable (NeedLeaderElection is false: every replica keeps
// its own certificate directory current). The webhook server reads its
// certificate when it starts, so call Ensure once before starting the
// controller-runtime manager; see Example.
//
// Key material is never logged. The PKI helpers are cert-manager's
// (github.com/cert-manager/cert-manager/pkg/util/pki).
package certs
