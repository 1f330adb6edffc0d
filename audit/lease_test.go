package audit

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

const (
	leaseNamespace = "apply-hygiene"
	leaseName      = "apply-hygiene-audit-schedule"
)

var (
	leasesGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	leasesGR  = leasesGVR.GroupResource()
	t0        = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
)

// scheduleLease returns the schedule Lease of a scan by holder that
// started at started and took two minutes.
func scheduleLease(holder string, started time.Time, transitions *int32) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: leaseNamespace, Name: leaseName}}
	(&LeaseSchedule{identity: holder}).fill(lease, ScanRecord{Started: started, Finished: started.Add(2 * time.Minute), Interval: time.Hour})
	lease.Spec.LeaseTransitions = transitions
	return lease
}

// leaseSummary reads the schedule Lease as "holder acquire renew duration
// transitions", or "none".
func leaseSummary(t *testing.T, client *fake.Clientset) string {
	t.Helper()
	lease, err := client.CoordinationV1().Leases(leaseNamespace).Get(t.Context(), leaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "none"
	}
	if err != nil {
		t.Fatal(err)
	}
	s := lease.Spec
	transitions := "-"
	if s.LeaseTransitions != nil {
		transitions = fmt.Sprint(*s.LeaseTransitions)
	}
	return fmt.Sprintf("%s %s %s %ds %s", *s.HolderIdentity, s.AcquireTime.UTC().Format(time.TimeOnly),
		s.RenewTime.UTC().Format(time.TimeOnly), *s.LeaseDurationSeconds, transitions)
}

// interfere makes the next count calls of verb on leases first run
// change (another replica's write) and then fail with err.
func interfere(client *fake.Clientset, verb string, count int, change func(), err func() error) {
	client.PrependReactor(verb, "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if count == 0 {
			return false, nil, nil
		}
		count--
		change()
		return true, nil, err()
	})
}

func int32p(n int32) *int32 { return &n }

func TestLeaseScheduleRecord(t *testing.T) {
	conflict := func() error {
		return apierrors.NewConflict(leasesGR, leaseName, fmt.Errorf("the object has been modified"))
	}
	tests := map[string]struct {
		stored    *coordinationv1.Lease
		interfere func(t *testing.T, client *fake.Clientset)
		scan      ScanRecord
		want      string
		wantErr   string
	}{
		"a missing Lease is created": {
			scan: ScanRecord{Started: t0, Finished: t0.Add(3 * time.Minute), Interval: time.Hour},
			want: "replica-b 12:00:00 12:03:00 3600s -",
		},
		"the next scan of the same replica updates it": {
			stored: scheduleLease("replica-b", t0, nil),
			scan:   ScanRecord{Started: t0.Add(time.Hour), Finished: t0.Add(61 * time.Minute), Interval: time.Hour},
			want:   "replica-b 13:00:00 13:01:00 3600s -",
		},
		"a scan of another replica counts a transition": {
			stored: scheduleLease("replica-a", t0, int32p(4)),
			scan:   ScanRecord{Started: t0.Add(time.Hour), Finished: t0.Add(61 * time.Minute), Interval: 90 * time.Second},
			want:   "replica-b 13:00:00 13:01:00 90s 5",
		},
		"an interval under a second is recorded as one second": {
			scan: ScanRecord{Started: t0, Finished: t0, Interval: 10 * time.Millisecond},
			want: "replica-b 12:00:00 12:00:00 1s -",
		},
		"a record of a later scan stays": {
			stored: scheduleLease("replica-a", t0.Add(time.Hour), nil),
			scan:   ScanRecord{Started: t0, Finished: t0.Add(time.Minute), Interval: time.Hour},
			want:   "replica-a 13:00:00 13:02:00 3600s -",
		},
		"a conflict reads again, and another replica's later scan stays": {
			stored: scheduleLease("replica-a", t0, nil),
			interfere: func(t *testing.T, client *fake.Clientset) {
				interfere(client, "update", 1, func() { put(t, client, scheduleLease("replica-c", t0.Add(2*time.Hour), nil)) }, conflict)
			},
			scan: ScanRecord{Started: t0.Add(time.Hour), Finished: t0.Add(61 * time.Minute), Interval: time.Hour},
			want: "replica-c 14:00:00 14:02:00 3600s -",
		},
		"a conflict reads again, and an earlier scan is replaced": {
			stored: scheduleLease("replica-a", t0, nil),
			interfere: func(t *testing.T, client *fake.Clientset) {
				interfere(client, "update", 1, func() { put(t, client, scheduleLease("replica-c", t0.Add(time.Minute), nil)) }, conflict)
			},
			scan: ScanRecord{Started: t0.Add(time.Hour), Finished: t0.Add(61 * time.Minute), Interval: time.Hour},
			want: "replica-b 13:00:00 13:01:00 3600s 1",
		},
		"a Lease created by another replica after the read is read and updated": {
			interfere: func(t *testing.T, client *fake.Clientset) {
				exists := func() error { return apierrors.NewAlreadyExists(leasesGR, leaseName) }
				interfere(client, "create", 1, func() { add(t, client, scheduleLease("replica-c", t0, nil)) }, exists)
			},
			scan: ScanRecord{Started: t0.Add(time.Hour), Finished: t0.Add(61 * time.Minute), Interval: time.Hour},
			want: "replica-b 13:00:00 13:01:00 3600s 1",
		},
		"a conflict on every attempt is an error": {
			stored: scheduleLease("replica-a", t0, nil),
			interfere: func(_ *testing.T, client *fake.Clientset) {
				interfere(client, "update", recordAttempts, func() {}, conflict)
			},
			scan:    ScanRecord{Started: t0.Add(time.Hour), Finished: t0.Add(61 * time.Minute), Interval: time.Hour},
			want:    "replica-a 12:00:00 12:02:00 3600s -",
			wantErr: "recording the audit scan in lease apply-hygiene/apply-hygiene-audit-schedule: it changed under each of 3 attempts",
		},
		"a forbidden update is an error naming the Lease": {
			stored: scheduleLease("replica-a", t0, nil),
			interfere: func(_ *testing.T, client *fake.Clientset) {
				interfere(client, "update", 1, func() {}, func() error { return apierrors.NewForbidden(leasesGR, leaseName, fmt.Errorf("no RBAC")) })
			},
			scan:    ScanRecord{Started: t0.Add(time.Hour), Finished: t0.Add(61 * time.Minute), Interval: time.Hour},
			want:    "replica-a 12:00:00 12:02:00 3600s -",
			wantErr: `updating the audit schedule lease apply-hygiene/apply-hygiene-audit-schedule: leases.coordination.k8s.io "apply-hygiene-audit-schedule" is forbidden: no RBAC`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client := fake.NewClientset()
			if tc.stored != nil {
				add(t, client, tc.stored)
			}
			if tc.interfere != nil {
				tc.interfere(t, client)
			}
			err := NewLeaseSchedule(client.CoordinationV1(), leaseNamespace, leaseName, "replica-b").Record(t.Context(), tc.scan)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Errorf("Record error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, leaseSummary(t, client)); diff != "" {
				t.Errorf("Lease (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLeaseScheduleLastRun(t *testing.T) {
	noAcquire := scheduleLease("replica-a", t0, nil)
	noAcquire.Spec.AcquireTime = nil
	tests := map[string]struct {
		stored  *coordinationv1.Lease
		forbid  bool
		want    time.Time
		wantErr string
	}{
		"no Lease: never": {},
		"a Lease without acquireTime: never": {
			stored: noAcquire,
		},
		"the recorded start": {
			stored: scheduleLease("replica-a", t0, nil),
			want:   t0,
		},
		"an unreadable Lease is an error naming it": {
			forbid:  true,
			wantErr: `reading the audit schedule lease apply-hygiene/apply-hygiene-audit-schedule: leases.coordination.k8s.io "apply-hygiene-audit-schedule" is forbidden: no RBAC`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client := fake.NewClientset()
			if tc.stored != nil {
				add(t, client, tc.stored)
			}
			if tc.forbid {
				interfere(client, "get", 1, func() {}, func() error { return apierrors.NewForbidden(leasesGR, leaseName, fmt.Errorf("no RBAC")) })
			}
			got, err := NewLeaseSchedule(client.CoordinationV1(), leaseNamespace, leaseName, "replica-b").LastRun(t.Context())
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Errorf("LastRun error (-want +got):\n%s", diff)
			}
			if !got.Equal(tc.want) {
				t.Errorf("LastRun = %v, want %v", got, tc.want)
			}
		})
	}
}

// add stores lease in the fake cluster.
func add(t *testing.T, client *fake.Clientset, lease *coordinationv1.Lease) {
	t.Helper()
	if err := client.Tracker().Add(lease); err != nil {
		t.Fatal(err)
	}
}

// put overwrites the stored lease, as another replica's update.
func put(t *testing.T, client *fake.Clientset, lease *coordinationv1.Lease) {
	t.Helper()
	if err := client.Tracker().Update(leasesGVR, lease, leaseNamespace); err != nil {
		t.Fatal(err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
