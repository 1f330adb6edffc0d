package audit

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// RedactError is err, but for a Secret (merge.IsSecret) only the API
// server's reason: a validation error may quote a field's value, and a
// Secret's values stay out of every output. The CLI prints a write's
// error through it.
func RedactError(ref merge.ObjectRef, err error) error {
	if err == nil || !merge.IsSecret(ref.Kind) {
		return err
	}
	reason := apierrors.ReasonForError(err)
	if reason == "" {
		return errors.New("writing the Secret failed (the error is not shown: it may quote a value)")
	}
	return fmt.Errorf("writing the Secret: the API server answered %s (its message is not shown: it may quote a value)", reason)
}
