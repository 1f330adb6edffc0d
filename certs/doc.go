// Package certs keeps the webhook's TLS serving certificate valid without
// cert-manager: the chart's default mode (certManager.enabled=false).
//
// A Manager owns one Secret in the server's namespace holding a private CA
// and a serving certificate for the webhook Service
// (<service>.<namespace>.svc and <service>.<namespace>.svc.cluster.local).
// Every replica runs one; together they:
//
//   - create the Secret when it is missing (replicas that race on the
//     creation read the winner's Secret back);
//   - renew the CA and the serving certificate in two phases when they
//     expire within Options.RenewBefore, so that no handshake fails: first
//     publish (the bundle becomes the new CA followed by the one that signed
//     the served certificate; the new certificate waits in next.crt and
//     next.key, the old one is still served), then, once the bundle has
//     been in both webhook configurations for Options.PublishDelay (the
//     time the API servers' informers take to see it; the Secret's
//     ServeNextAfterAnnotation says until when), promote next.crt to
//     tls.crt. The bundle keeps the previous CA until the next renewal, so
//     replicas that still serve the old certificate stay trusted until they
//     pick up the new one. A Secret whose served certificate is unusable
//     (expired, other hosts, invalid) has nothing to protect and is
//     replaced, or its staged certificate promoted, at once. The state lives
//     in the shared Secret, so any replica, including one started in the
//     middle, carries a renewal on;
//   - inject the CA bundle into every webhook of the Mutating and the
//     Validating webhook configuration named Options.WebhookConfigName;
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
