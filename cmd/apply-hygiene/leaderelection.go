package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/leaderelection"
)

// LeaderElectionOptions tune the election of the one replica that runs the
// periodic audit (--audit-interval), as client-go's LeaderElectionConfig.
type LeaderElectionOptions struct {
	// LeaseDuration is how long the other replicas wait after the
	// leader's last renewal before they take the lease over: the longest
	// hand-over after a leader dies without releasing it (default 15s).
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps retrying to renew
	// before it gives up leading, and the process exits (default 10s).
	RenewDeadline time.Duration
	// RetryPeriod is the time between two attempts to take or renew the
	// lease (default 2s).
	RetryPeriod time.Duration
}

// AddFlags registers the options on fs.
func (o *LeaderElectionOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "periodic audit: how long the other replicas "+
		"wait after the leader's last renewal before they take its lease over (a leader that crashed; one that shuts down gracefully releases it at once)")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", 10*time.Second, "periodic audit: how long the leader retries "+
		"renewing its lease before it stops leading and exits; less than --leader-election-lease-duration")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", 2*time.Second, "periodic audit: time between two attempts to take "+
		"or renew the lease; --leader-election-renew-deadline must exceed 1.2 times it")
}

// Validate checks the options as client-go's leaderelection.NewLeaderElector
// does, at start-up and naming the flags.
func (o *LeaderElectionOptions) Validate() []error {
	var errs []error
	for _, f := range []struct {
		flag  string
		value time.Duration
	}{
		{"--leader-election-lease-duration", o.LeaseDuration},
		{"--leader-election-renew-deadline", o.RenewDeadline},
		{"--leader-election-retry-period", o.RetryPeriod},
	} {
		if f.value <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", f.flag, f.value))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if o.LeaseDuration <= o.RenewDeadline {
		errs = append(errs, fmt.Errorf("--leader-election-lease-duration (%s) must be greater than --leader-election-renew-deadline (%s)",
			o.LeaseDuration, o.RenewDeadline))
	}
	if o.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(o.RetryPeriod)) {
		errs = append(errs, fmt.Errorf("--leader-election-renew-deadline (%s) must be greater than %.1f times --leader-election-retry-period (%s)",
			o.RenewDeadline, leaderelection.JitterFactor, o.RetryPeriod))
	}
	return errs
}
