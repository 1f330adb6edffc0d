package realworld_test

import (
	"os"
	"path/filepath"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// predictWith runs p's diff on the manifest the step's apply is about to send
// and returns the check of kubectl's result (life.predict).
func (l *life) predictWith(p *framework.Predictor, step string, manifest []byte) func(framework.Result) {
	l.t.Helper()
	file := filepath.Join(l.t.TempDir(), "manifest.json")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		l.t.Fatal(err)
	}
	return p.Before(l.t, l.f.Kubectl, l.w.id()+": step "+step, file)
}
