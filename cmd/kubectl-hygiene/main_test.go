package main

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
)

// The verbs' own tests are in their packages (internal/cli/<verb>); these
// test the root command: its wiring of the verbs to the cluster, the krew
// manifest, the version and completion.

// runCmd runs the command line in-process, as main does.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code = run(t.Context(), streams, args)
	return out.String(), errOut.String(), code
}

// runCluster runs the command line in-process against connect.
func runCluster(t *testing.T, connect cluster.ConnectFunc, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code = runWith(t.Context(), streams, args, connect)
	return out.String(), errOut.String(), code
}
