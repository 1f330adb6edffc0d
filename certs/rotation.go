package certs

import (
	"fmt"
	"time"
)

// ServeNextAfterAnnotation on the Secret is the earliest time (RFC 3339)
// at which a replica may promote the staged next.crt to tls.crt. It is set
// when the new CA is published, and pushed back whenever a replica has to
// put the bundle into a webhook configuration that did not have it yet.
const ServeNextAfterAnnotation = "apply-hygiene.io/serve-next-after"

// content is what the Secret holds or must hold: its material and, while
// a rotation is staged, when the next certificate may be served.
type content struct {
	mat            material
	serveNextAfter time.Time
}

// plan decides what the Secret must hold at now, given its data and its
// serve-next-after annotation. It returns the content and, when that
// differs from what is stored, the reason to write it (for the log; it
// never quotes the data).
//
// A renewal comes in two phases so that no replica serves a certificate
// an API server does not trust yet: when the served certificate is due
// but still usable, stage (new CA first in the bundle, the new leaf in
// next.crt, the old leaf still served); Ensure promotes next.crt once the
// bundle has been in both webhook configurations for PublishDelay. When
// the served certificate is unusable there is nothing to protect: replace
// it at once, or promote a usable staged one at once.
func (m *Manager) plan(data map[string][]byte, annotation string, now time.Time) (content, string, error) {
	hosts := m.opts.hosts()
	mat, p, err := parse(data)
	if err != nil {
		return m.replace(p, now, err.Error())
	}
	servedErr := p.usable(hosts, now, p.cas)
	prefix := ""
	if mat.staged() {
		next, nextErr := parseNext(mat, p.cas)
		if nextErr == nil {
			nextErr = next.check(hosts, now, m.opts.RenewBefore)
		}
		after, afterErr := time.Parse(time.RFC3339, annotation)
		switch {
		case nextErr == nil && servedErr != nil:
			return content{mat: promoted(mat)}, "the served certificate is unusable (" + servedErr.Error() + "); serving the staged one at once", nil
		case nextErr == nil && afterErr != nil:
			return content{mat: mat, serveNextAfter: now.Add(m.opts.PublishDelay)}, "the staged certificate has no valid " + ServeNextAfterAnnotation, nil
		case nextErr == nil:
			return content{mat: mat, serveNextAfter: after}, "", nil
		}
		prefix = "dropping the unusable staged certificate (" + nextErr.Error() + "); "
		mat.nextCert, mat.nextKey = nil, nil
	}
	if servedErr != nil {
		return m.replace(p, now, prefix+servedErr.Error())
	}
	dueErr := p.check(hosts, now, m.opts.RenewBefore)
	if dueErr == nil {
		if prefix != "" {
			return content{mat: mat}, prefix + "keeping the served certificate", nil
		}
		return content{mat: mat}, "", nil
	}
	return m.stage(p, mat, now, prefix+dueErr.Error())
}

// stage keeps serving mat's certificate and adds a new CA, first in the
// bundle before the CA that signed the served certificate, and a new
// certificate signed by it as next.crt, to be served after PublishDelay.
func (m *Manager) stage(p parsed, mat material, now time.Time, reason string) (content, string, error) {
	gen, err := generate(m.opts.hosts(), now, m.opts.Validity, p.signer())
	if err != nil {
		return content{}, "", err
	}
	staged := material{caBundle: gen.caBundle, cert: mat.cert, key: mat.key, nextCert: gen.cert, nextKey: gen.key}
	return content{mat: staged, serveNextAfter: now.Add(m.opts.PublishDelay)},
		"staging a new CA and certificate, served after " + m.opts.PublishDelay.String() + ": " + reason, nil
}

// replace makes a new CA and certificate served at once, keeping the
// previous CA in the bundle while it is valid.
func (m *Manager) replace(p parsed, now time.Time, reason string) (content, string, error) {
	gen, err := generate(m.opts.hosts(), now, m.opts.Validity, previousCA(p, now))
	if err != nil {
		return content{}, "", err
	}
	return content{mat: gen}, "regenerating at once: " + reason, nil
}

// promoted is mat with its staged certificate served; the bundle is kept,
// so the previous CA stays trusted for replicas that still serve the old
// certificate until the next renewal.
func promoted(mat material) material {
	return material{caBundle: mat.caBundle, cert: mat.nextCert, key: mat.nextKey}
}

// annotations returns the Secret's annotations for c, leaving the others
// of existing alone.
func (c content) annotations(existing map[string]string) map[string]string {
	out := make(map[string]string, len(existing)+1)
	for k, v := range existing {
		if k != ServeNextAfterAnnotation {
			out[k] = v
		}
	}
	if c.mat.staged() {
		out[ServeNextAfterAnnotation] = c.serveNextAfter.UTC().Format(time.RFC3339Nano)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// String keeps the material out of logs.
func (c content) String() string {
	return fmt.Sprintf("certs.content{staged: %t, serveNextAfter: %s}", c.mat.staged(), c.serveNextAfter.UTC().Format(time.RFC3339))
}
