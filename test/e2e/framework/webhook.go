package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/hack/controlplane"
	"github.com/apply-hygiene/apply-hygiene/hack/devenv"
)

func startWebhook(ctx context.Context, o mainOptions) (*devenv.Webhook, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(env.binDir, "helm")); err != nil {
		return nil, fmt.Errorf("e2e with the webhook needs helm in %s: run `make tools`", env.binDir)
	}
	return devenv.Start(ctx, env.cp, devenv.Options{
		RepoRoot:       root,
		BinDir:         env.binDir,
		Dir:            filepath.Join(env.cp.Dir(), "apply-hygiene"),
		Values:         o.values,
		SelfManagedTLS: o.selfManagedTLS,
		// Every review is analyzed pruned and whole; checkShadow fails
		// the package on a difference.
		ServerArgs: append([]string{"--shadow-verify"}, o.serverArgs...),
		Replicas:   o.replicas,
		APIServer:  o.apiServer,
	})
}

// Webhook returns the running apply-hygiene server of a package started
// with WithWebhook.
func Webhook(t *testing.T) *devenv.Webhook {
	t.Helper()
	requireEnv(t)
	if env.webhook == nil {
		t.Fatal("the package's TestMain did not start the webhook (framework.WithWebhook)")
	}
	return env.webhook
}
