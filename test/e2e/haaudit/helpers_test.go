package haaudit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// scheduleLease is the Lease that records the last audit scan;
// electionLease is the leader-election lock.
const (
	scheduleLease = "apply-hygiene-audit-schedule"
	electionLease = "apply-hygiene-audit"
)

// leaderSeries is client-go's leader-election gauge, as controller-runtime
// exports it, for the audit's lease.
const leaderSeries = `leader_election_master_status{name="apply-hygiene-audit"} 1`

// leaders returns the running replicas that lead the audit.
func leaders(ctx context.Context, w *devenv.Webhook) []int {
	var out []int
	for _, r := range w.Replicas() {
		if r.Running() && strings.Contains(framework.ReplicaMetrics(ctx, r), leaderSeries) {
			out = append(out, r.Index)
		}
	}
	return out
}

// waitLeader waits until exactly one replica leads and returns it and
// when it was seen leading.
func waitLeader(t *testing.T, w *devenv.Webhook, timeout time.Duration) (*devenv.Replica, time.Time) {
	t.Helper()
	var leader []int
	framework.Eventually(t, timeout, "one replica leading the audit", func(ctx context.Context) (bool, error) {
		leader = leaders(ctx, w)
		return len(leader) == 1, nil
	})
	return w.Replicas()[leader[0]], time.Now()
}

// lastScan reads the schedule Lease: who ran the last scan and when it
// started.
func lastScan(ctx context.Context, t *testing.T, f *framework.Framework) (holder string, started time.Time) {
	t.Helper()
	lease, err := f.Client.CoordinationV1().Leases(devenv.Namespace).Get(ctx, scheduleLease, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the audit schedule lease: %v", err)
	}
	return leaseHolder(lease), leaseStarted(lease)
}

// election reads the leader-election Lease: its holder, when it acquired
// it and when it last renewed it (or released it).
func election(ctx context.Context, f *framework.Framework) (holder string, acquired, renewed time.Time, err error) {
	lease, err := f.Client.CoordinationV1().Leases(devenv.Namespace).Get(ctx, electionLease, metav1.GetOptions{})
	if err != nil {
		return "", time.Time{}, time.Time{}, fmt.Errorf("reading the leader-election lease: %w", err)
	}
	if lease.Spec.RenewTime != nil {
		renewed = lease.Spec.RenewTime.Time
	}
	return leaseHolder(lease), leaseStarted(lease), renewed, nil
}

func leaseHolder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func leaseStarted(l *coordinationv1.Lease) time.Time {
	if l.Spec.AcquireTime == nil {
		return time.Time{}
	}
	return l.Spec.AcquireTime.Time
}

// scan is one "audit scan finished" line of a replica's log.
type scan struct {
	replica  int
	finished time.Time
	findings int
}

// scans reads the finished scans from every replica's log, in time order.
func scans(t *testing.T, w *devenv.Webhook) []scan {
	t.Helper()
	var out []scan
	for _, r := range w.Replicas() {
		file, err := os.Open(r.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var line struct {
				Msg      string    `json:"msg"`
				Finished time.Time `json:"finished"`
				Findings int       `json:"findings"`
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "audit scan finished" {
				continue
			}
			out = append(out, scan{replica: r.Index, finished: line.Finished, findings: line.Findings})
		}
		_ = file.Close()
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].finished.Before(out[j-1].finished); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// checkOncePerInterval fails t unless consecutive scans since since are
// at least an interval apart (less a tenth for the scans' own duration),
// across all replicas.
func checkOncePerInterval(t *testing.T, all []scan, since time.Time) int {
	t.Helper()
	n := 0
	var prev *scan
	for i := range all {
		s := &all[i]
		if s.finished.Before(since) {
			continue
		}
		n++
		if prev != nil && s.finished.Sub(prev.finished) < interval-interval/10 {
			t.Errorf("replica %d finished a scan at %s, %s after replica %d's at %s: want one scan per interval (%s) across replicas",
				s.replica, s.finished.Format("15:04:05.000"), s.finished.Sub(prev.finished).Round(time.Millisecond),
				prev.replica, prev.finished.Format("15:04:05.000"), interval)
		}
		prev = s
	}
	return n
}

// findingsExporters returns the replicas whose /metrics hold a findings
// series for namespace.
func findingsExporters(ctx context.Context, w *devenv.Webhook, namespace string) []int {
	var out []int
	for _, r := range w.Replicas() {
		if r.Running() && strings.Contains(framework.ReplicaMetrics(ctx, r), fmt.Sprintf(`apply_hygiene_audit_findings{namespace=%q,rule="missing-last-applied"} 1`, namespace)) {
			out = append(out, r.Index)
		}
	}
	return out
}

// eventCount is how often the audit reported rule reason on object name:
// the events' occurrences (a series counts each).
func eventCount(ctx context.Context, t *testing.T, f *framework.Framework, name, reason string) int {
	t.Helper()
	events, err := f.Client.EventsV1().Events(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events.Items {
		if e.Regarding.Name != name || e.Reason != reason {
			continue
		}
		if e.Series != nil {
			n += int(e.Series.Count)
		} else {
			n++
		}
	}
	return n
}

// reportResults are the OpenReports Reports of the namespace, one line per
// result: "<report>: <rule> <kind>/<name>" of each object it names.
func reportResults(t *testing.T, f *framework.Framework) []string {
	t.Helper()
	var list v1alpha1.ReportList
	out := f.Kubectl.Run(t, "get", "reports.openreports.io", "-o", "json").MustSucceed(t)
	if err := json.Unmarshal([]byte(out.Stdout), &list); err != nil {
		t.Fatalf("decoding the Reports: %v", err)
	}
	var lines []string
	for _, r := range list.Items {
		for _, res := range r.Results {
			for _, s := range res.Subjects {
				lines = append(lines, fmt.Sprintf("%s: %s %s/%s", r.Name, res.Rule, s.Kind, s.Name))
			}
		}
	}
	return lines
}
