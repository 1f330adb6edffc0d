package certs

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// secretAttempts bounds the rounds of ensureSecret lost to other replicas
// (AlreadyExists on create, Conflict on update).
const secretAttempts = 5

// managedByLabel marks the Secret as apply-hygiene's.
const managedByLabel = "app.kubernetes.io/managed-by"

// ensureSecret returns the Secret's material, after creating the Secret
// when it is missing or regenerating its content when it is unfit. Another
// replica doing the same at the same time makes the create or the update
// fail; the loser reads the winner's Secret back.
func (m *Manager) ensureSecret(ctx context.Context) (material, error) {
	log := logr.FromContextOrDiscard(ctx)
	secrets := m.client.CoreV1().Secrets(m.opts.Namespace)
	for range secretAttempts {
		now := m.opts.Now()
		sec, err := secrets.Get(ctx, m.opts.SecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			mat, err := generate(m.opts.hosts(), now, m.opts.Validity, nil)
			if err != nil {
				return material{}, err
			}
			_, err = secrets.Create(ctx, m.newSecret(mat), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				return material{}, fmt.Errorf("creating %s: %w", m.secretRef(), err)
			}
			log.Info("created the webhook certificate secret", "secret", m.opts.SecretName)
			return mat, nil
		}
		if err != nil {
			return material{}, fmt.Errorf("getting %s: %w", m.secretRef(), err)
		}
		mat, p, err := parse(sec.Data)
		if err == nil {
			err = p.check(m.opts.hosts(), now, m.opts.RenewBefore)
		}
		if err == nil {
			return mat, nil
		}
		log.Info("regenerating the webhook certificate", "secret", m.opts.SecretName, "reason", err.Error())
		mat, err = generate(m.opts.hosts(), now, m.opts.Validity, previousCA(p, now))
		if err != nil {
			return material{}, err
		}
		sec.Data = mat.data()
		_, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return material{}, fmt.Errorf("updating %s: %w", m.secretRef(), err)
		}
		return mat, nil
	}
	return material{}, fmt.Errorf("ensuring %s: gave up after %d attempts lost to concurrent writers", m.secretRef(), secretAttempts)
}

func (m *Manager) newSecret(mat material) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      m.opts.SecretName,
			Namespace: m.opts.Namespace,
			Labels:    map[string]string{managedByLabel: "apply-hygiene"},
		},
		Type: corev1.SecretTypeTLS,
		Data: mat.data(),
	}
}
