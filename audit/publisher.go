package audit

import (
	"context"
	"time"

	"github.com/go-logr/logr"
)

// Publisher publishes the report of each successful periodic scan, e.g.
// as policy reports (package reports). It is called on the leader after
// the gauges and events; an error is logged and the audit goes on.
type Publisher interface {
	Publish(ctx context.Context, report *Report, scanned time.Time) error
}

// PublisherFunc adapts a function to Publisher.
type PublisherFunc func(ctx context.Context, report *Report, scanned time.Time) error

// Publish calls f.
func (f PublisherFunc) Publish(ctx context.Context, report *Report, scanned time.Time) error {
	return f(ctx, report, scanned)
}

var _ Publisher = PublisherFunc(nil)

// publish hands report to the Publisher, if any; a failure is logged only.
func (r *Runner) publish(ctx context.Context, report *Report, scanned time.Time) {
	if r.opts.Publisher == nil {
		return
	}
	if err := r.opts.Publisher.Publish(ctx, report, scanned); err != nil && ctx.Err() == nil {
		logr.FromContextOrDiscard(ctx).WithName("audit").Error(err, "publishing the audit's findings failed; the audit goes on")
	}
}
