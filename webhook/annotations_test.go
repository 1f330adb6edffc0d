package webhook

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAuditAnnotationsAreTheAnswersOwn holds the audit annotations of each
// answer to a map of its own. A caller of Validating or Mutating may add
// its own annotation to the answer (a handler chained after the
// webhook's); the allowed answers shared one map per classification, so
// such an addition showed in every later answer, and concurrent additions
// raced.
func TestAuditAnnotationsAreTheAnswersOwn(t *testing.T) {
	req := loadReview(t, "deployment-apply")
	r := NewReviewer(newEngine(t), loadCluster(t, filepath.Join("testdata", "reviews", "deployment-apply.cluster.json")))
	want := map[string]string{AuditAction: actionAllow, AuditClassification: "client-side-apply"}
	for name, handle := range map[string]func() map[string]string{
		"the validating pass's answer": func() map[string]string { return r.Validating().Handle(t.Context(), req).AuditAnnotations },
		"the mutating pass's answer":   func() map[string]string { return r.Mutating().Handle(t.Context(), req).AuditAnnotations },
	} {
		t.Run(name, func(t *testing.T) {
			first := handle()
			if diff := cmp.Diff(want, first); diff != "" {
				t.Fatalf("first answer's audit annotations (-want +got):\n%s", diff)
			}
			first["chained"] = "added by the caller"
			if diff := cmp.Diff(want, handle()); diff != "" {
				t.Errorf("next answer's audit annotations after the caller changed the first one's (-want +got):\n%s", diff)
			}
		})
	}
}
