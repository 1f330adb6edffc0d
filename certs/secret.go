package certs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// secretAttempts bounds the rounds of ensureSecret, and of Ensure, lost to
// other replicas (AlreadyExists on create, Conflict on update).
const secretAttempts = 5

// managedByLabel marks the Secret as apply-hygiene's.
const managedByLabel = "app.kubernetes.io/managed-by"

// errLostRace is returned when another replica changed the Secret between
// a read and an update; the caller reads it again.
var errLostRace = errors.New("the secret was changed by another replica")

// stored is the Secret as this round read or wrote it, and the time the
// round decided at.
type stored struct {
	content
	secret *corev1.Secret
	now    time.Time
}

// ensureSecret returns the Secret's content, after creating the Secret
// when it is missing or writing what plan decides. Another replica doing
// the same at the same time makes the create or the update fail (the
// update carries the resourceVersion read); the loser reads the winner's
// Secret back.
func (m *Manager) ensureSecret(ctx context.Context) (stored, error) {
	log := logr.FromContextOrDiscard(ctx)
	secrets := m.client.CoreV1().Secrets(m.opts.Namespace)
	for range secretAttempts {
		now := m.opts.Now()
		sec, err := secrets.Get(ctx, m.opts.SecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			mat, err := generate(m.opts.hosts(), now, m.opts.Validity, nil)
			if err != nil {
				return stored{}, err
			}
			created, err := secrets.Create(ctx, m.newSecret(mat), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				return stored{}, fmt.Errorf("creating %s: %w", m.secretRef(), err)
			}
			log.Info("created the webhook certificate secret", "secret", m.opts.SecretName)
			return stored{content: content{mat: mat}, secret: created, now: now}, nil
		}
		if err != nil {
			return stored{}, fmt.Errorf("getting %s: %w", m.secretRef(), err)
		}
		c, reason, err := m.plan(sec.Data, sec.Annotations[ServeNextAfterAnnotation], now)
		if err != nil {
			return stored{}, err
		}
		if reason == "" {
			return stored{content: c, secret: sec, now: now}, nil
		}
		log.Info("updating the webhook certificate secret", "secret", m.opts.SecretName, "reason", reason)
		st, err := m.writeSecret(ctx, sec, c, now)
		if errors.Is(err, errLostRace) {
			continue
		}
		return st, err
	}
	return stored{}, fmt.Errorf("ensuring %s: gave up after %d attempts lost to concurrent writers", m.secretRef(), secretAttempts)
}

// writeSecret updates sec, as read, to hold c. It returns errLostRace when
// another replica changed or deleted the Secret since.
func (m *Manager) writeSecret(ctx context.Context, sec *corev1.Secret, c content, now time.Time) (stored, error) {
	sec = sec.DeepCopy()
	sec.Data = c.mat.data()
	sec.Annotations = c.annotations(sec.Annotations)
	updated, err := m.client.CoreV1().Secrets(m.opts.Namespace).Update(ctx, sec, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return stored{}, errLostRace
	}
	if err != nil {
		return stored{}, fmt.Errorf("updating %s: %w", m.secretRef(), err)
	}
	return stored{content: c, secret: updated, now: now}, nil
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
