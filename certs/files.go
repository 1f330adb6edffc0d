package certs

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
)

// haveFiles reports whether the certificate directory holds a loadable
// key pair.
func (m *Manager) haveFiles() bool {
	_, err := tls.LoadX509KeyPair(filepath.Join(m.opts.CertDir, CertKey), filepath.Join(m.opts.CertDir, KeyKey))
	return err == nil
}

// writeFiles writes tls.key, then tls.crt, each by an atomic rename, and
// leaves files that already hold the content alone. It reports whether it
// wrote anything.
func (m *Manager) writeFiles(mat material) (bool, error) {
	if err := os.MkdirAll(m.opts.CertDir, 0o700); err != nil {
		return false, fmt.Errorf("creating the certificate directory: %w", err)
	}
	changed := false
	for _, f := range []struct {
		name    string
		content []byte
		mode    os.FileMode
	}{
		{KeyKey, mat.key, 0o600},
		{CertKey, mat.cert, 0o644},
	} {
		path := filepath.Join(m.opts.CertDir, f.name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.content) {
			continue
		}
		if err := writeAtomic(path, f.content, f.mode); err != nil {
			return changed, err
		}
		changed = true
	}
	return changed, nil
}

// writeAtomic replaces path with content through a temporary file in the
// same directory, so readers see the old or the new file, never a part.
func writeAtomic(path string, content []byte, mode os.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("creating a temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("setting the mode of %s: %w", tmp.Name(), err)
	}
	if _, err := tmp.Write(content); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("syncing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", tmp.Name(), path, err)
	}
	return nil
}
