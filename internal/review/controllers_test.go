package review

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the chart's list of controller users")

// chartControllerUsers is the list the chart's not-a-controller match
// condition renders.
const chartControllerUsers = "../../charts/apply-hygiene/files/controller-users.json"

// The chart spares the webhook calls of exactly the users that
// isController lets through: one list, written from ControllerUsers
// (regenerate with go test ./internal/review -run TestChartControllerUsers -update).
func TestChartControllerUsers(t *testing.T) {
	want := ControllerUsers()
	if *update {
		b, err := json.MarshalIndent(want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(chartControllerUsers, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(chartControllerUsers)
	if err != nil {
		t.Fatalf("reading %s (regenerate with -update): %v", chartControllerUsers, err)
	}
	var got []string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("decoding %s: %v", chartControllerUsers, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s differs from ControllerUsers; regenerate with -update (-want +got):\n%s", chartControllerUsers, diff)
	}
}
