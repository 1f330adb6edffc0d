// Command apply-hygiene is the admission webhook server: it serves the
// mutating (/mutate) and validating (/validate) webhooks over TLS from
// --cert-dir (reloaded on change), /healthz and /readyz, and Prometheus
// metrics, and shuts down gracefully, letting in-flight reviews finish.
// `apply-hygiene --help` lists the flags; docs/operations.md explains them.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
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
	if err := run(ctrl.SetupSignalHandler(), opts); err != nil {
		fmt.Fprintln(os.Stderr, "apply-hygiene:", err)
		os.Exit(1)
	}
}
