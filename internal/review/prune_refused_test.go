package review

import (
	"strings"
	"testing"
)

// TestPruneLeavesAFieldTheServerWillNotLetGo: each orphan here is a field
// whose removal the API server refuses (422) once the object exists, which
// merge's frozenOnUpdate table and removalRefused once left out. Where no
// removal proof runs (kubectl hygiene test and diff, a Secret, which is
// never proved, an orphan past orphanproof.MaxProofs, a proof that timed
// out or whose 422 names a grand-parent), the prune's patch rides on the
// user's apply and makes the API server refuse it, and the printed
// command fails. A correct tool writes nothing and prints no command.
func TestPruneLeavesAFieldTheServerWillNotLetGo(t *testing.T) {
	for name, tc := range map[string]struct {
		fixture string
		// why is the API server's refusal.
		why string
	}{
		"a Job's completions": {fixture: "prune-job-completions",
			why: "spec.completions: field is immutable (validateCompletions: a non-Indexed Job's is immutable, an Indexed Job's may not become nil)"},
		"an immutable Secret's immutable field": {fixture: "prune-secret-immutable",
			why: "immutable: Forbidden: field is immutable when `immutable` is set (ValidateSecretUpdate)"},
		"a template label the Deployment's selector matches": {fixture: "prune-selected-label",
			why: "spec.template.metadata.labels: Invalid value: `selector` does not match template `labels` (ValidateDeploymentSpec)"},
		"the private key of a TLS Secret": {fixture: "prune-secret-tls",
			why: "data[tls.key]: Required value (ValidateSecret: a kubernetes.io/tls Secret holds tls.crt and tls.key)"},
	} {
		t.Run(name, func(t *testing.T) {
			old, new := fixture(t, tc.fixture, "live"), fixture(t, tc.fixture, "applied")
			_, prunes := orphanPrune(t, old, new)
			d := prunes[0]
			if len(d.Patch) > 0 || d.Command != "" {
				t.Errorf("prune of %v writes %v and shows %q; the API server answers %s", d.Paths, d.Patch, d.Command, tc.why)
			}
			if strings.Contains(d.Message, "apply-hygiene removes it in this request") {
				t.Errorf("message %q claims a removal the API server refuses", d.Message)
			}
		})
	}
}
