// Command kubectl-hygiene shows what `kubectl apply` will really do to an
// object and which apply-hygiene rules it trips. On PATH it also runs as the
// kubectl plugin `kubectl hygiene`.
package main

import (
	"context"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// version is the plugin's release, as the krew manifest (plugins/hygiene.yaml)
// names it; releases set it with -ldflags "-X main.version=vX.Y.Z".
var version = "v0.1.0"

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(run(context.Background(), streams, os.Args[1:]))
}
