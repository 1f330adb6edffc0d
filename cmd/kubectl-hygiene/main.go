// Command kubectl-hygiene shows what `kubectl apply` will really do to an
// object and which apply-hygiene rules it trips. On PATH it also runs as the
// kubectl plugin `kubectl hygiene`.
package main

import (
	"context"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(run(context.Background(), streams, os.Args[1:]))
}
