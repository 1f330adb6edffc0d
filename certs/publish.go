package certs

import (
	"context"

	"github.com/go-logr/logr"
)

// publish moves a staged rotation on, and returns what to serve now:
//
//   - when a webhook configuration lacks the staged bundle, first make sure
//     the Secret says not to serve next.crt before PublishDelay from now
//     (the API servers' informers need that long to see the bundle Ensure
//     injects next);
//   - when both configurations already hold it and serve-next-after has
//     passed, promote next.crt to tls.crt.
//
// Both write the Secret with the resourceVersion read before the
// configurations were checked, so a replica that promotes cannot miss a
// push-back another replica made before injecting (errLostRace: read
// again). When the configurations cannot be read, st is returned as is and
// the injection that follows reports the error.
func (m *Manager) publish(ctx context.Context, st stored) (stored, error) {
	found := m.bundleInjection(ctx, st.mat.caBundle)
	if found == injectionUnknown {
		return st, nil
	}
	earliest := st.now.Add(m.opts.PublishDelay)
	if found == injectionMissing {
		if !st.serveNextAfter.Before(earliest) {
			return st, nil
		}
		c := st.content
		c.serveNextAfter = earliest
		logr.FromContextOrDiscard(ctx).Info("the CA bundle is not in the webhook configurations yet; postponing the new certificate",
			"secret", m.opts.SecretName, "serveNextAfter", earliest)
		return m.writeSecret(ctx, st.secret, c, st.now)
	}
	if st.now.Before(st.serveNextAfter) {
		return st, nil
	}
	logr.FromContextOrDiscard(ctx).Info("the new CA has been published; serving the staged certificate", "secret", m.opts.SecretName)
	return m.writeSecret(ctx, st.secret, content{mat: promoted(st.mat)}, st.now)
}
