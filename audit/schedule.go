package audit

import (
	"context"
	"time"
)

// Schedule keeps, across the replicas of the server, when the last
// successful periodic scan started, so that a replica that becomes the
// leader right after another one's scan waits the rest of the interval
// instead of scanning (and recording its events) again. A LeaseSchedule is
// one.
type Schedule interface {
	// LastRun returns when the last recorded scan started; the zero time
	// when none was recorded.
	LastRun(ctx context.Context) (time.Time, error)
	// Record records a scan that finished without error.
	Record(ctx context.Context, scan ScanRecord) error
}

// ScanRecord is one scan a Runner records in its Schedule.
type ScanRecord struct {
	// Started is when the scan started; the next one is due at
	// Started+Interval.
	Started time.Time
	// Finished is when it finished.
	Finished time.Time
	// Interval is the Runner's interval.
	Interval time.Duration
}

// ScheduleFuncs adapts two functions to a Schedule.
type ScheduleFuncs struct {
	// LastRunFunc implements LastRun.
	LastRunFunc func(ctx context.Context) (time.Time, error)
	// RecordFunc implements Record.
	RecordFunc func(ctx context.Context, scan ScanRecord) error
}

var _ Schedule = ScheduleFuncs{}

// LastRun implements Schedule.
func (f ScheduleFuncs) LastRun(ctx context.Context) (time.Time, error) { return f.LastRunFunc(ctx) }

// Record implements Schedule.
func (f ScheduleFuncs) Record(ctx context.Context, scan ScanRecord) error {
	return f.RecordFunc(ctx, scan)
}

// nextStart returns when the next scan is due: an interval after the later
// of the last recorded start and this replica's own last start, at once
// when that is past or when no scan ran. A last start in the future (a
// clock ahead of this one) never delays a scan by more than one interval
// from now.
func nextStart(now, recorded, own time.Time, interval time.Duration) time.Time {
	last := recorded
	if own.After(last) {
		last = own
	}
	if last.IsZero() {
		return now
	}
	next := last.Add(interval)
	if next.Before(now) {
		return now
	}
	if latest := now.Add(interval); next.After(latest) {
		return latest
	}
	return next
}
