package review

import (
	"strings"
	"testing"
)

// A Job's spec.managedBy is immutable once the Job exists
// (ValidateJobSpecUpdate). A prune that removed it would make the API
// server refuse the user's apply (422): it is frozen, the prune writes
// nothing and the message says that it goes only with the object.
func TestPruneLeavesAJobsImmutableField(t *testing.T) {
	old, new := fixture(t, "prune-job-managedby", "live"), fixture(t, "prune-job-managedby", "applied")
	_, prunes := orphanPrune(t, old, new)
	if d := prunes[0]; len(d.Patch) > 0 || d.Command != "" {
		t.Errorf("prune of %v writes %v and shows %q: the API server refuses the removal of a Job's managedBy", d.Paths, d.Patch, d.Command)
	}
	if !strings.Contains(prunes[0].Message, "The API server refuses its removal while the object exists") {
		t.Errorf("message %q does not say that the field goes only with the object", prunes[0].Message)
	}
}
