package certs

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of Options.
const (
	// DefaultValidity is the default lifetime of the CA and the serving
	// certificate.
	DefaultValidity = 365 * 24 * time.Hour
	// DefaultCheckInterval is the default period of Start's checks.
	DefaultCheckInterval = time.Minute
	// MaxDefaultPublishDelay caps the default of Options.PublishDelay.
	MaxDefaultPublishDelay = time.Minute
)

// Options configure a Manager. The first five fields are required.
type Options struct {
	// Namespace is the server's own namespace: where the Secret lives and
	// the namespace of the webhook Service.
	Namespace string
	// SecretName is the Secret that holds the CA and the serving
	// certificate (keys ca.crt, tls.crt and tls.key), shared by all
	// replicas.
	SecretName string
	// ServiceName is the webhook Service; the serving certificate is valid
	// for <ServiceName>.<Namespace>.svc and
	// <ServiceName>.<Namespace>.svc.cluster.local.
	ServiceName string
	// WebhookConfigName names both the MutatingWebhookConfiguration and
	// the ValidatingWebhookConfiguration whose webhooks get the CA bundle.
	WebhookConfigName string
	// CertDir is the directory the webhook server reads tls.crt and
	// tls.key from. It must be writable.
	CertDir string

	// ExtraHosts are further DNS names or IP addresses the serving
	// certificate must be valid for. Default: none.
	ExtraHosts []string
	// Validity is the lifetime of a new CA and serving certificate.
	// Default: DefaultValidity (one year).
	Validity time.Duration
	// RenewBefore is how long before expiry both are regenerated.
	// Default: a third of Validity. It must be less than Validity.
	RenewBefore time.Duration
	// CheckInterval is how often Start checks the Secret, the webhook
	// configurations and the files. Default: DefaultCheckInterval.
	CheckInterval time.Duration
	// PublishDelay is how long a renewal keeps the new serving certificate
	// staged (next.crt) after the new CA was put into the webhook
	// configurations, before any replica serves it. The API server reads
	// webhook configurations through an informer: for a moment after the
	// update it, and with several API servers each of them, may still
	// trust only the old bundle, and a handshake with the new certificate
	// would fail. Default: RenewBefore/4, at most MaxDefaultPublishDelay
	// (propagation takes seconds; the old certificate stays valid for
	// RenewBefore). PublishDelay plus CheckInterval must be less than
	// RenewBefore (the old certificate must outlive the promotion) and
	// than Validity-RenewBefore (every replica must serve the promoted
	// certificate before the next renewal drops the old CA).
	PublishDelay time.Duration
	// Now returns the current time. Default: time.Now. Tests set it to
	// force a rotation.
	Now func() time.Time
}

// withDefaults validates o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	for _, req := range []struct{ name, value string }{
		{"Namespace", o.Namespace},
		{"SecretName", o.SecretName},
		{"ServiceName", o.ServiceName},
		{"WebhookConfigName", o.WebhookConfigName},
		{"CertDir", o.CertDir},
	} {
		if req.value == "" {
			errs = append(errs, fmt.Errorf("%s is required", req.name))
		}
	}
	if o.Validity == 0 {
		o.Validity = DefaultValidity
	}
	if o.RenewBefore == 0 {
		o.RenewBefore = o.Validity / 3
	}
	if o.CheckInterval == 0 {
		o.CheckInterval = DefaultCheckInterval
	}
	if o.PublishDelay == 0 {
		o.PublishDelay = min(o.RenewBefore/4, MaxDefaultPublishDelay)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Validity < 0 || o.RenewBefore < 0 || o.CheckInterval < 0 || o.PublishDelay < 0 {
		errs = append(errs, errors.New("durations must not be negative (Validity, RenewBefore, CheckInterval, PublishDelay)"))
	}
	if o.RenewBefore >= o.Validity {
		errs = append(errs, fmt.Errorf("RenewBefore (%s) must be less than Validity (%s)", o.RenewBefore, o.Validity))
	} else if step := o.PublishDelay + o.CheckInterval; step >= o.RenewBefore || step >= o.Validity-o.RenewBefore {
		errs = append(errs, fmt.Errorf("PublishDelay (%s) plus CheckInterval (%s) must be less than RenewBefore (%s) and than Validity minus RenewBefore (%s)",
			o.PublishDelay, o.CheckInterval, o.RenewBefore, o.Validity-o.RenewBefore))
	}
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("invalid certs options: %w", err)
	}
	return o, nil
}

// hosts are the names the serving certificate must be valid for.
func (o Options) hosts() []string {
	base := o.ServiceName + "." + o.Namespace + ".svc"
	return append([]string{base, base + ".cluster.local"}, o.ExtraHosts...)
}
