package main

import "github.com/apply-hygiene/apply-hygiene/internal/cli"

// The exit statuses, as this package's tests name them.
const (
	exitOK       = cli.ExitOK
	exitFailure  = cli.ExitFailure
	exitBadInput = cli.ExitBadInput
)
