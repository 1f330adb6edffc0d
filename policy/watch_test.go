package policy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// waitFor polls cond until it holds or 15 seconds pass (a policy load
// takes seconds under the race detector on a busy machine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWatchReloadsOnChange(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("notes.txt", "not a policy")
	write("no_edit_in_prod_test.rego", "this is not even Rego, and tests are skipped")
	e := newEngine(t, WithDirs(dir), WithDebounce(20*time.Millisecond))
	done := make(chan error, 1)
	go func() { done <- e.Watch(t.Context()) }()
	in := loadInput(t, "imperative")
	in.Namespace.Labels = map[string]string{"env": "prod"}
	// Write until the watcher, which starts in the background, sees it.
	waitFor(t, "the new module", func() bool {
		write("no-edit-in-prod.rego", noEditInProd)
		time.Sleep(100 * time.Millisecond)
		return e.Status().Version >= 2
	})
	// Repeated writes may have queued more reloads; a load takes a while
	// (partial evaluation of the silent classifications; seconds under the
	// race detector), so wait until the version stops moving.
	version := settledVersion(t, e)
	got, err := e.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"imperative-edit=deny", "no-edit-in-prod=deny"}, summary(got)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}

	write("broken.rego", "package broken\n\nx := {\n")
	waitFor(t, "the load error", func() bool { return e.Status().LastError != nil })
	if st := e.Status(); st.Version != version {
		t.Errorf("version after a failed reload = %d, want %d", st.Version, version)
	}
	if _, err := e.Evaluate(t.Context(), in); err != nil {
		t.Errorf("Evaluate after a failed reload: %v", err)
	}

	if err := os.Remove(filepath.Join(dir, "broken.rego")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the repaired set", func() bool {
		st := e.Status()
		return st.Version > version && st.LastError == nil
	})
}

// settledVersion waits until e's version has not changed for a second and
// returns it.
func settledVersion(t *testing.T, e *Engine) uint64 {
	t.Helper()
	// A reload that a queued notice started may still run (seconds on a
	// loaded machine): the version counts as settled once it has not
	// moved for three seconds in a row.
	const still = 3
	deadline := time.Now().Add(30 * time.Second)
	v, unmoved := e.Status().Version, 0
	for unmoved < still {
		time.Sleep(time.Second)
		now := e.Status().Version
		if now != v {
			v, unmoved = now, 0
		} else {
			unmoved++
		}
		if time.Now().After(deadline) {
			t.Fatalf("the policy version kept moving: %d", now)
		}
	}
	return v
}

func TestWatchStopsWithContext(t *testing.T) {
	e := newEngine(t, WithDirs(t.TempDir()))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Watch(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Watch = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not return")
	}
}

func TestWatchMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	e := newEngine(t, WithDirs(dir))
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := e.Watch(t.Context()); err == nil {
		t.Error("Watch of a removed directory succeeded")
	}
}

func TestNewMissingDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := New(t.Context(), WithDirs(missing))
	if err == nil {
		t.Fatal("New with a missing directory succeeded")
	}
}
