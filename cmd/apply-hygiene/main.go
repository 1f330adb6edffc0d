// Command apply-hygiene is the admission webhook server: it serves the
// mutating (/mutate) and validating (/validate) webhooks over TLS from
// --cert-dir (reloaded on change), /healthz and /readyz, and Prometheus
// metrics, and shuts down gracefully on SIGTERM: not ready at once, serving
// on for --shutdown-delay, then closing its listener and letting in-flight
// reviews finish (shutdown.go).
// `apply-hygiene --help` lists the flags; docs/operations.md explains them.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
)

func main() {
	var opts Options
	fs := pflag.NewFlagSet("apply-hygiene", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "apply-hygiene:", err)
		os.Exit(2)
	}
	// Two signals fit: the first starts the graceful shutdown, the second
	// ends the process at once.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)
	if err := run(context.Background(), opts, signals, os.Exit); err != nil {
		fmt.Fprintln(os.Stderr, "apply-hygiene:", err)
		os.Exit(1)
	}
}
