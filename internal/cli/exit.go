package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// Exit statuses of kubectl hygiene.
const (
	// ExitOK: the command did what it was asked and found nothing to refuse.
	ExitOK = 0
	// ExitFailure: the command failed, or found what makes it fail (a
	// denied apply, a failed test case).
	ExitFailure = 1
	// ExitBadInput: the flags, files or documents are wrong.
	ExitBadInput = 2
)

// ExitError carries the exit status that main returns for an error.
type ExitError struct {
	// Code is the exit status.
	Code int
	// Err is the error printed.
	Err error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// BadInput marks err as caused by the input: flags, files, documents.
func BadInput(err error) error { return &ExitError{Code: ExitBadInput, Err: err} }

// Code is the exit status for err: ExitOK for nil, the status an
// ExitError in its chain carries, else ExitFailure.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *ExitError
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitFailure
}

// NoArgs rejects positional arguments as bad input; hint says what to
// pass instead.
func NoArgs(hint string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return BadInput(fmt.Errorf("unexpected argument %q: %s", args[0], hint))
		}
		return nil
	}
}
