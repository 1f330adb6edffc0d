package certs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
)

// Manager keeps the webhook's serving certificate, the Secret that holds
// it and the caBundle of the webhook configurations current. Create it
// with NewManager.
type Manager struct {
	client kubernetes.Interface
	opts   Options
}

// NewManager returns a Manager that uses client, which needs get, create
// and update on the Secret and get, update on both webhook configurations
// (the chart's RBAC in self-managed mode).
func NewManager(client kubernetes.Interface, opts Options) (*Manager, error) {
	if client == nil {
		return nil, errors.New("invalid certs options: a client is required")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Manager{client: client, opts: opts}, nil
}

// NeedLeaderElection is false: every replica must keep its own
// certificate directory current. It implements controller-runtime's
// manager.LeaderElectionRunnable.
func (m *Manager) NeedLeaderElection() bool { return false }

// Start runs Ensure now and then every Options.CheckInterval until ctx
// ends, logging (not returning) the errors of each round, which the next
// round retries. It implements controller-runtime's manager.Runnable and
// returns nil when ctx ends.
func (m *Manager) Start(ctx context.Context) error {
	log := logr.FromContextOrDiscard(ctx).WithName("certs")
	ticker := time.NewTicker(m.opts.CheckInterval)
	defer ticker.Stop()
	for {
		if err := m.Ensure(ctx); err != nil {
			log.Error(err, "ensuring the webhook certificate failed; retrying", "retryIn", m.opts.CheckInterval)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Ensure makes everything current once: the Secret (created, renewal
// staged or promoted, or regenerated when unusable), the caBundle of every
// webhook in both configurations, then tls.crt and tls.key in the
// certificate directory. When the caBundle cannot be injected, the files
// are only written if the directory has no certificate yet, so a replica
// never serves a certificate the API server does not trust while an older
// one works.
func (m *Manager) Ensure(ctx context.Context) error {
	for range secretAttempts {
		st, err := m.ensureSecret(ctx)
		if err != nil {
			return err
		}
		if st.mat.staged() {
			st, err = m.publish(ctx, st)
			if errors.Is(err, errLostRace) {
				continue
			}
			if err != nil {
				return err
			}
		}
		return m.serve(ctx, st.mat)
	}
	return fmt.Errorf("ensuring %s: gave up after %d attempts lost to concurrent writers", m.secretRef(), secretAttempts)
}

// serve injects mat's bundle and writes its key pair into the certificate
// directory.
func (m *Manager) serve(ctx context.Context, mat material) error {
	injectErr := m.injectCABundle(ctx, mat.caBundle)
	if injectErr != nil && m.haveFiles() {
		return injectErr
	}
	changed, err := m.writeFiles(mat)
	if err != nil {
		return errors.Join(injectErr, err)
	}
	if changed {
		logr.FromContextOrDiscard(ctx).Info("wrote the webhook serving certificate", "dir", m.opts.CertDir)
	}
	return injectErr
}

func (m *Manager) secretRef() string {
	return fmt.Sprintf("secret %s/%s", m.opts.Namespace, m.opts.SecretName)
}
