package audit

import (
	"context"
	"fmt"
	"math"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// recordAttempts is how often Record re-reads the Lease after a conflict.
const recordAttempts = 3

// LeaseSchedule is a Schedule kept in a coordination.k8s.io/v1 Lease, a
// record rather than a lock (leader election is another Lease): after each
// successful scan, spec.holderIdentity is the replica that ran it,
// spec.acquireTime its start, spec.renewTime its end,
// spec.leaseDurationSeconds the interval, and spec.leaseTransitions counts
// the changes of auditing replica. It needs get, create and update on
// leases in its namespace.
type LeaseSchedule struct {
	client    coordinationv1client.LeasesGetter
	namespace string
	name      string
	identity  string
}

var _ Schedule = (*LeaseSchedule)(nil)

// NewLeaseSchedule returns a Schedule kept in the Lease namespace/name;
// identity names this replica (its pod name) in the Lease.
func NewLeaseSchedule(client coordinationv1client.LeasesGetter, namespace, name, identity string) *LeaseSchedule {
	return &LeaseSchedule{client: client, namespace: namespace, name: name, identity: identity}
}

// LastRun implements Schedule: the Lease's spec.acquireTime; the zero time
// when the Lease or the field does not exist.
func (s *LeaseSchedule) LastRun(ctx context.Context) (time.Time, error) {
	lease, err := s.client.Leases(s.namespace).Get(ctx, s.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the audit schedule lease %s/%s: %w", s.namespace, s.name, err)
	}
	return started(lease), nil
}

// Record implements Schedule: it creates the Lease or updates it with the
// resourceVersion it read. On a conflict it reads again: when another
// replica recorded a scan that started no earlier, that record stays.
func (s *LeaseSchedule) Record(ctx context.Context, scan ScanRecord) error {
	leases := s.client.Leases(s.namespace)
	for range recordAttempts {
		lease, err := leases.Get(ctx, s.name, metav1.GetOptions{})
		isNew := apierrors.IsNotFound(err)
		switch {
		case isNew:
			lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: s.name}}
		case err != nil:
			return fmt.Errorf("reading the audit schedule lease %s/%s: %w", s.namespace, s.name, err)
		case !started(lease).Before(scan.Started):
			return nil
		}
		s.fill(lease, scan)
		op, raced := "updating", apierrors.IsConflict
		if isNew {
			op, raced = "creating", apierrors.IsAlreadyExists
			_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		} else {
			_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		}
		if raced(err) {
			continue // another replica wrote the Lease since it was read
		}
		if err != nil {
			return fmt.Errorf("%s the audit schedule lease %s/%s: %w", op, s.namespace, s.name, err)
		}
		return nil
	}
	return fmt.Errorf("recording the audit scan in lease %s/%s: it changed under each of %d attempts", s.namespace, s.name, recordAttempts)
}

// fill sets the Lease's spec to scan, run by this replica.
func (s *LeaseSchedule) fill(lease *coordinationv1.Lease, scan ScanRecord) {
	spec := &lease.Spec
	if spec.HolderIdentity != nil && *spec.HolderIdentity != s.identity {
		transitions := int32(1)
		if spec.LeaseTransitions != nil {
			transitions = *spec.LeaseTransitions + 1
		}
		spec.LeaseTransitions = &transitions
	}
	identity := s.identity
	spec.HolderIdentity = &identity
	acquire, renew := metav1.NewMicroTime(scan.Started), metav1.NewMicroTime(scan.Finished)
	spec.AcquireTime, spec.RenewTime = &acquire, &renew
	seconds := durationSeconds(scan.Interval)
	spec.LeaseDurationSeconds = &seconds
}

// started is the start of the scan recorded in lease.
func started(lease *coordinationv1.Lease) time.Time {
	if lease.Spec.AcquireTime == nil {
		return time.Time{}
	}
	return lease.Spec.AcquireTime.Time
}

// durationSeconds rounds d up to whole seconds, at least 1 (the API
// server rejects 0) and at most what an int32 holds.
func durationSeconds(d time.Duration) int32 {
	s := math.Ceil(d.Seconds())
	switch {
	case s < 1:
		return 1
	case s > math.MaxInt32:
		return math.MaxInt32
	}
	return int32(s)
}
