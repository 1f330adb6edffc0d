package merge

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/google/go-cmp/cmp"
)

// ErrShadowMismatch means that an analysis with the shortcuts of prune.go
// differs from the same analysis without them (WithShadowVerify).
var ErrShadowMismatch = errors.New("shadow verification: the pruned analysis differs from the full one")

// verified runs analyze on a, and, when a verifies in the shadow, once
// more without pruning, and returns an error wrapping ErrShadowMismatch
// when the two answers differ.
func verified[T any](a *Analyzer, what string, analyze func(*Analyzer) (T, error)) (T, error) {
	got, err := analyze(a)
	if !a.shadowVerify {
		return got, err
	}
	oracle := *a
	oracle.withoutPruning, oracle.shadowVerify, oracle.lastApplied = true, false, nil
	want, wantErr := analyze(&oracle)
	switch {
	case err != nil && wantErr == nil:
		return got, fmt.Errorf("%w: %s fails only with pruning: %w", ErrShadowMismatch, what, err)
	case err == nil && wantErr != nil:
		var zero T
		return zero, fmt.Errorf("%w: %s fails only without pruning: %w", ErrShadowMismatch, what, wantErr)
	case err != nil:
		return got, err
	case !reflect.DeepEqual(want, got):
		var zero T
		return zero, fmt.Errorf("%w: %s (-full +pruned):\n%s", ErrShadowMismatch, what, cmp.Diff(want, got))
	}
	return got, nil
}
