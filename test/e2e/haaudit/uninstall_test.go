package haaudit_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// helm uninstall deletes the Role and its RoleBinding while the pods are
// in their shutdown delay: the audit leader cannot release (or even
// renew) its lease any more. It says so in one line, without a stack
// trace, and exits.
func TestLeaderShutsDownWithoutItsRole(t *testing.T) {
	f := framework.New(t)
	w := framework.Webhook(t)
	ctx := t.Context()
	leader, _ := waitLeader(t, w, 30*time.Second)
	waitLeasesOwned(t, f) // the leader is done with its own writes
	bindings := f.Client.RbacV1().RoleBindings(devenv.Namespace)
	binding, err := bindings.Get(ctx, devenv.Release, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the server's RoleBinding: %v", err)
	}
	t.Cleanup(func() {
		restored := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name, Namespace: binding.Namespace, Labels: binding.Labels,
			Annotations: binding.Annotations}, RoleRef: binding.RoleRef, Subjects: binding.Subjects}
		if _, err := bindings.Create(context.Background(), restored, metav1.CreateOptions{}); err != nil {
			t.Errorf("restoring the RoleBinding: %v", err)
		}
		if err := leader.Start(context.Background()); err != nil {
			t.Errorf("restarting replica %d: %v", leader.Index, err)
		}
	})
	before := logSize(t, leader)
	if err := bindings.Delete(ctx, binding.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the RoleBinding: %v", err)
	}
	time.Sleep(2 * retryPeriod) // a renewal or two fail, as in the shutdown delay
	if err := leader.Terminate(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	lines := logSince(t, leader, before)
	t.Logf("replica %d's log from the RoleBinding's deletion to its exit:\n%s", leader.Index, strings.Join(lines, "\n"))
	var forbidden, traced []string
	for _, l := range lines {
		var line struct {
			Level, Logger, Msg string
			Stacktrace         string
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			// net/http's own lines (a TLS handshake cut by the shutdown).
			line.Msg = l
		}
		if strings.Contains(l, "is forbidden") {
			forbidden = append(forbidden, line.Level+" "+line.Logger+": "+line.Msg)
		}
		if line.Stacktrace != "" {
			traced = append(traced, line.Level+" "+line.Logger+": "+line.Msg)
		}
	}
	want := []string{"info leaderelection: no access to the audit's leader-election Lease (its Role is gone, as during helm uninstall, or lacks leases): " +
		"not renewing or releasing it; another replica takes it over when it expires"}
	if diff := cmp.Diff(want, forbidden); diff != "" {
		t.Errorf("the lines about the forbidden Lease (-want +got):\n%s", diff)
	}
	if len(traced) > 0 {
		t.Errorf("lines with a stack trace: %q", traced)
	}
	if code := leader.ExitCode(); code != 0 {
		t.Errorf("replica %d exited %d, want 0", leader.Index, code)
	}
}

// helm uninstall deletes the chart's ConfigMap; the audit leader made it
// the owner of both audit Leases, so the garbage collector deletes them
// too (the server cannot: its Role goes first).
func TestAuditLeasesAreOwnedByTheChartsConfigMap(t *testing.T) {
	waitLeasesOwned(t, framework.New(t))
}

// waitLeasesOwned waits until both audit Leases name the chart's ConfigMap,
// and only it, as their owner.
func waitLeasesOwned(t *testing.T, f *framework.Framework) {
	t.Helper()
	cm, err := f.Client.CoreV1().ConfigMaps(devenv.Namespace).Get(t.Context(), configMap, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the chart's ConfigMap: %v", err)
	}
	want := []string{"v1 ConfigMap " + configMap + " " + string(cm.UID)}
	for _, name := range []string{electionLease, scheduleLease} {
		framework.Eventually(t, 3*interval, "lease "+name+" owned by the ConfigMap", func(ctx context.Context) (bool, error) {
			lease, err := f.Client.CoordinationV1().Leases(devenv.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil //nolint:nilerr // the schedule Lease appears after the first scan
			}
			var got []string
			for _, o := range lease.OwnerReferences {
				got = append(got, o.APIVersion+" "+o.Kind+" "+o.Name+" "+string(o.UID))
			}
			return cmp.Equal(want, got), nil
		})
	}
}

func logSize(t *testing.T, r *devenv.Replica) int64 {
	t.Helper()
	st, err := os.Stat(r.LogPath)
	if err != nil {
		t.Fatalf("reading replica %d's log: %v", r.Index, err)
	}
	return st.Size()
}

func logSince(t *testing.T, r *devenv.Replica, offset int64) []string {
	t.Helper()
	data, err := os.ReadFile(r.LogPath)
	if err != nil {
		t.Fatalf("reading replica %d's log: %v", r.Index, err)
	}
	return strings.Split(strings.TrimSpace(string(data[offset:])), "\n")
}
