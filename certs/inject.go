package certs

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// injectCABundle sets bundle as the caBundle of every webhook in both
// configurations, updating only those that differ.
func (m *Manager) injectCABundle(ctx context.Context, bundle []byte) error {
	return errors.Join(
		m.injectMutating(ctx, bundle),
		m.injectValidating(ctx, bundle),
	)
}

func (m *Manager) injectMutating(ctx context.Context, bundle []byte) error {
	api := m.client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cfg, err := api.Get(ctx, m.opts.WebhookConfigName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		changed := false
		for i := range cfg.Webhooks {
			cc := &cfg.Webhooks[i].ClientConfig
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
		logr.FromContextOrDiscard(ctx).Info("Injected the CA bundle", "mutatingWebhookConfiguration", cfg.Name)
		return nil
	})
	if err != nil {
		return fmt.Errorf("injecting the CA bundle into mutatingwebhookconfiguration %s: %w", m.opts.WebhookConfigName, err)
	}
	return nil
}

func (m *Manager) injectValidating(ctx context.Context, bundle []byte) error {
	api := m.client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cfg, err := api.Get(ctx, m.opts.WebhookConfigName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		changed := false
		for i := range cfg.Webhooks {
			cc := &cfg.Webhooks[i].ClientConfig
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
		logr.FromContextOrDiscard(ctx).Info("Injected the CA bundle", "validatingWebhookConfiguration", cfg.Name)
		return nil
	})
	if err != nil {
		return fmt.Errorf("injecting the CA bundle into validatingwebhookconfiguration %s: %w", m.opts.WebhookConfigName, err)
	}
	return nil
}
