package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/hack/node"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// Images are the tarballs of make image, in bin/images of the repository.
var Images = []string{"apply-hygiene.tar", "pause.tar", "helm-test.tar"}

// WithNode runs a real node beside the control plane (package hack/node)
// with the images of make image imported, instead of a control plane
// alone. On a machine that can never run one (not root, no cgroups) the
// package's tests skip saying so, also under APPLY_HYGIENE_E2E=required;
// a missing tool or image fails them there.
func WithNode() MainOption {
	return func(o *mainOptions) { o.node = true }
}

// setUpNode starts the node and its control plane into env.
func setUpNode(ctx context.Context) {
	if why := node.Unsupported(); why != "" {
		env.skipWhy, env.skipAlways = why, true
		return
	}
	if missing := node.Missing(env.binDir); len(missing) > 0 {
		env.skipWhy = "the node test needs " + strings.Join(missing, "; ")
		return
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		env.err = err
		return
	}
	var images, missing []string
	for _, name := range Images {
		path := filepath.Join(root, "bin", "images", name)
		if _, err := os.Stat(path); err != nil {
			missing = append(missing, path)
		}
		images = append(images, path)
	}
	if len(missing) > 0 {
		env.skipWhy = "the node test needs " + strings.Join(missing, ", ") + ": run `make image`"
		return
	}
	start := time.Now()
	progress := func(msg string) {
		fmt.Fprintf(os.Stderr, "[node %5.1fs] %s\n", time.Since(start).Seconds(), msg)
	}
	env.node, env.err = node.Start(ctx, node.Options{BinDir: env.binDir, Images: images, Progress: progress})
	progress("ready")
	if env.err != nil {
		env.err = fmt.Errorf("starting the node: %w", env.err)
		return
	}
	env.cp = env.node.ControlPlane()
}

// Node returns the package's node (WithNode).
func Node(t *testing.T) *node.Node {
	t.Helper()
	requireEnv(t)
	if env.node == nil {
		t.Fatal("the package's TestMain did not start a node (framework.WithNode)")
	}
	return env.node
}
