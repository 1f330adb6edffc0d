package framework

import (
	"encoding/json"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The outputs of the server and the cluster that a test scans as a whole,
// for instance for a Secret's value that must appear in none of them.

// ServerLog returns the webhook server's log; it fails t when the log
// cannot be read or is empty.
func ServerLog(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(Webhook(t).LogPath)
	if err != nil {
		t.Fatalf("reading the server log: %v", err)
	}
	if len(data) == 0 {
		t.Fatal("the server log is empty")
	}
	return string(data)
}

// AllEvents returns every event in the cluster, of both event APIs, as
// JSON.
func (f *Framework) AllEvents(t *testing.T) string {
	t.Helper()
	core, err := f.Client.CoreV1().Events("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events, err := f.Client.EventsV1().Events("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal([]any{core, events})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
