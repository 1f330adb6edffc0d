package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

func startWebhook(ctx context.Context, o mainOptions, dir string) (*devenv.Webhook, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(env.binDir, "helm")); err != nil {
		return nil, fmt.Errorf("e2e with the webhook needs helm in %s: run `make tools`", env.binDir)
	}
	w, err := devenv.Start(ctx, env.cp, devenv.Options{
		RepoRoot:       root,
		BinDir:         env.binDir,
		Dir:            dir,
		Binary:         env.serverBinary,
		Values:         o.values,
		SelfManagedTLS: o.selfManagedTLS,
		// Every review is analyzed pruned and whole; checkShadow fails
		// the package on a difference.
		ServerArgs: append([]string{"--shadow-verify"}, o.serverArgs...),
		Replicas:   o.replicas,
		APIServer:  o.apiServer,
	})
	if err == nil && env.serverBinary == "" {
		env.serverBinary = w.Binary
	}
	return w, err
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

// UseWebhook installs apply-hygiene for the rest of t, as WithWebhook and
// WithServerArgs do for a whole package: the chart with values and the
// server with serverArgs. When t ends the server stops and the chart is
// uninstalled again. It lets a package whose TestMain starts no webhook
// run groups of tests, each against a server configured its own way, on
// one control plane.
func UseWebhook(t *testing.T, values []string, serverArgs ...string) {
	t.Helper()
	requireEnv(t)
	if env.webhook != nil {
		t.Fatal("UseWebhook: the package already runs a webhook")
	}
	dir := filepath.Join(env.cp.Dir(), "apply-hygiene-"+invalidName.ReplaceAllString(strings.ToLower(t.Name()), "-"))
	w, err := startWebhook(t.Context(), mainOptions{webhook: true, values: values, serverArgs: serverArgs}, dir)
	if err != nil {
		t.Fatalf("starting apply-hygiene: %v", err)
	}
	env.webhook, env.values = w, values
	t.Cleanup(func() {
		// Not t.Context(): it is canceled before cleanups run.
		ctx := context.Background()
		if err := checkShadow(ctx, w); err != nil {
			t.Error(err)
		}
		env.webhook, env.values = nil, nil
		if err := w.Close(); err != nil {
			t.Errorf("stopping apply-hygiene: %v", err)
		}
		if err := w.Uninstall(ctx, env.cp); err != nil {
			t.Errorf("uninstalling apply-hygiene: %v", err)
		}
	})
}
