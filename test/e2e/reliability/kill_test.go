package reliability_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const (
	clients = 8
	// killUp and killDown are how long the server runs and stays dead in
	// each cycle of the killer.
	killUp   = 1500 * time.Millisecond
	killDown = 1000 * time.Millisecond
)

// ephemeral matches the ports in a cause, which differ in every run.
var ephemeral = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// applyUnderKills has 8 clients apply their own Deployment perClient times
// each, with a new image every time, while the server is killed with
// SIGKILL and restarted over and over.
func applyUnderKills(t *testing.T, f *framework.Framework, perClient int) []framework.ClientLoad {
	t.Helper()
	w, cp := framework.Webhook(t), framework.ControlPlane(t)
	var kills atomic.Int32
	loads := f.ApplyLoad(t, clients, perClient, func(ctx context.Context, done <-chan struct{}) error {
		return killer(ctx, done, &kills, w.Kill, func() error { return w.Restart(ctx, cp) })
	})
	t.Logf("%d kills", kills.Load())
	if kills.Load() < 3 {
		t.Errorf("the server was killed %d times during the applies, want at least 3", kills.Load())
	}
	return loads
}

// killer kills and restarts the server until done is closed, and leaves
// it running.
func killer(ctx context.Context, done <-chan struct{}, kills *atomic.Int32, kill, restart func() error) error {
	for {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(killUp):
		}
		if err := kill(); err != nil {
			return err
		}
		kills.Add(1)
		time.Sleep(killDown)
		if err := restart(); err != nil {
			return err
		}
	}
}

// With failurePolicy Ignore a crash loses nothing: every apply succeeds
// without a word on stderr, and every object ends exactly as its last
// apply asked. 1,000 applies (framework.LoadApplies).
func TestKillDuringAppliesWithIgnore(t *testing.T) {
	f := framework.New(t)
	perClient := framework.LoadApplies(t, clients) / clients
	loads := applyUnderKills(t, f, perClient)
	for c, l := range loads {
		if len(l.Failures) > 0 {
			t.Errorf("client %d: %d of %d applies failed, want none; first:\n%s", c, len(l.Failures), perClient, l.Failures[0].Stderr)
		}
		if len(l.StderrOK) > 0 {
			t.Errorf("client %d: %d applies printed on stderr, want none; first:\n%s", c, len(l.StderrOK), l.StderrOK[0])
		}
		f.CheckApplied(t, l.Name, framework.LoadDeployment(l.Name, perClient))
	}
}

// With failurePolicy Fail an apply the server cannot review fails with
// kubectl's "failed calling webhook" error and changes nothing; once the
// server is back, the same apply goes through.
func TestKillDuringAppliesWithFail(t *testing.T) {
	f := framework.New(t)
	framework.WithFailurePolicy(t, "Fail")
	const perClient = 40
	loads := applyUnderKills(t, f, perClient)
	failed, causes := 0, map[string]int{}
	for c, l := range loads {
		if len(l.Failures) > 0 && failed == 0 {
			t.Logf("a failed apply's stderr:\n%s", l.Failures[0].Stderr)
		}
		failed += len(l.Failures)
		for _, fa := range l.Failures {
			m := framework.WebhookFailure.FindStringSubmatch(lastLine(fa.Stderr))
			if m == nil {
				t.Errorf("client %d: a failed apply's stderr does not end in the webhook failure:\n%s", c, fa.Stderr)
				continue
			}
			causes[ephemeral.ReplaceAllString(m[3], "127.0.0.1:PORT")]++
		}
		// A failed apply changed nothing: live is the last successful one.
		f.CheckApplied(t, l.Name, l.LastOK)
		final := framework.LoadDeployment(l.Name, perClient)
		f.Kubectl.RunWithInput(t, final, "apply", "-f", "-").MustSucceed(t)
		f.CheckApplied(t, l.Name, final)
	}
	t.Logf("%d of %d applies failed cleanly; causes: %v", failed, clients*perClient, sortedCounts(causes))
	if failed == 0 {
		t.Errorf("no apply failed while the server was down, want some (failurePolicy Fail)")
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func sortedCounts(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%dx %s", v, k))
	}
	sort.Strings(out)
	return out
}
