package certs

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// injectCABundle sets bundle as the caBundle of every webhook in both
// configurations, updating only those that differ.
func (m *Manager) injectCABundle(ctx context.Context, bundle []byte) error {
	api := m.client.AdmissionregistrationV1()
	return errors.Join(
		inject(ctx, api.MutatingWebhookConfigurations(), m.opts.WebhookConfigName, "mutatingwebhookconfiguration", bundle,
			func(c *admissionregistrationv1.MutatingWebhookConfiguration) []*admissionregistrationv1.WebhookClientConfig {
				return clientConfigs(c.Webhooks, func(w *admissionregistrationv1.MutatingWebhook) *admissionregistrationv1.WebhookClientConfig {
					return &w.ClientConfig
				})
			}),
		inject(ctx, api.ValidatingWebhookConfigurations(), m.opts.WebhookConfigName, "validatingwebhookconfiguration", bundle,
			func(c *admissionregistrationv1.ValidatingWebhookConfiguration) []*admissionregistrationv1.WebhookClientConfig {
				return clientConfigs(c.Webhooks, func(w *admissionregistrationv1.ValidatingWebhook) *admissionregistrationv1.WebhookClientConfig {
					return &w.ClientConfig
				})
			}),
	)
}

// injection is what bundleInjection found.
type injection int

const (
	// injectionUnknown: a configuration could not be read (the injection
	// that follows reports why).
	injectionUnknown injection = iota
	// injectionMissing: some webhook lacks the bundle.
	injectionMissing
	// injectionDone: every webhook of both configurations has it.
	injectionDone
)

// bundleInjection reports whether every webhook of both configurations
// has bundle as its caBundle.
func (m *Manager) bundleInjection(ctx context.Context, bundle []byte) injection {
	api := m.client.AdmissionregistrationV1()
	mwc, err := api.MutatingWebhookConfigurations().Get(ctx, m.opts.WebhookConfigName, metav1.GetOptions{})
	if err != nil {
		return injectionUnknown
	}
	vwc, err := api.ValidatingWebhookConfigurations().Get(ctx, m.opts.WebhookConfigName, metav1.GetOptions{})
	if err != nil {
		return injectionUnknown
	}
	for _, wh := range mwc.Webhooks {
		if !bytes.Equal(wh.ClientConfig.CABundle, bundle) {
			return injectionMissing
		}
	}
	for _, wh := range vwc.Webhooks {
		if !bytes.Equal(wh.ClientConfig.CABundle, bundle) {
			return injectionMissing
		}
	}
	return injectionDone
}

// webhookConfigurations is what inject needs of the typed client of the
// mutating or the validating configurations.
type webhookConfigurations[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, cfg T, opts metav1.UpdateOptions) (T, error)
}

// inject sets bundle as the caBundle of every webhook of the configuration
// name, updating it only when one differs.
func inject[T any](ctx context.Context, api webhookConfigurations[T], name, kind string, bundle []byte,
	clientConfigs func(T) []*admissionregistrationv1.WebhookClientConfig) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cfg, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		changed := false
		for _, cc := range clientConfigs(cfg) {
			if !bytes.Equal(cc.CABundle, bundle) {
				cc.CABundle, changed = bundle, true
			}
		}
		if !changed {
			return nil
		}
		if _, err := api.Update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
			return err
		}
		logr.FromContextOrDiscard(ctx).Info("injected the CA bundle", "kind", kind, "name", name)
		return nil
	})
	if err != nil {
		return fmt.Errorf("injecting the CA bundle into %s %s: %w", kind, name, err)
	}
	return nil
}

// clientConfigs returns the client config of each of webhooks, to write in
// place.
func clientConfigs[W any](webhooks []W, config func(*W) *admissionregistrationv1.WebhookClientConfig) []*admissionregistrationv1.WebhookClientConfig {
	out := make([]*admissionregistrationv1.WebhookClientConfig, len(webhooks))
	for i := range webhooks {
		out[i] = config(&webhooks[i])
	}
	return out
}
