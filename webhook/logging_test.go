package webhook

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// TestDecisionLogLevels checks at which verbosity each handler logs its
// decisions: what refuses or changes a write at info (V(0)), what lets it
// through unchanged with a warning at debug (V(1)).
func TestDecisionLogLevels(t *testing.T) {
	tests := map[string]struct {
		review string
		config policy.Config
		want   []string // "V(level) message rule action", in order
	}{
		"a dryrun decision is logged at info": {
			review: "deployment-set-image", config: policy.Config{Rules: map[string]policy.RuleConfig{"imperative-edit": {Action: policy.ActionDryRun}}},
			want: []string{"V(0) decided imperative-edit dryrun"},
		},
		"a denial is logged at info": {
			review: "deployment-set-image", want: []string{"V(0) decided imperative-edit deny"},
		},
		"a warning is logged at debug": {
			review: "deployment-edit-by-service-account", want: []string{"V(1) decided imperative-edit warn"},
		},
		"an orphan warning on apply is logged at debug": {
			review: "deployment-apply-after-restart", want: []string{"V(1) decided orphaned-field warn"},
		},
		"a repair is logged at info": {
			review: "deployment-rollout-undo", want: []string{"V(0) decided stale-last-applied repair"},
		},
		"an allowed apply logs nothing": {
			review: "deployment-apply",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			engine, err := policy.New(t.Context(), policy.WithConfig(tc.config))
			if err != nil {
				t.Fatalf("creating the policy engine: %v", err)
			}
			var got []string
			logger := funcr.NewJSON(func(obj string) {
				var line struct {
					Level        int
					Msg          string
					Rule, Action string
				}
				if err := json.Unmarshal([]byte(obj), &line); err != nil {
					t.Errorf("decoding the log line %s: %v", obj, err)
				}
				got = append(got, fmt.Sprintf("V(%d) %s %s %s", line.Level, line.Msg, line.Rule, line.Action))
			}, funcr.Options{Verbosity: 1})
			ctx := log.IntoContext(t.Context(), logger)
			req := loadReview(t, tc.review)
			r := NewReviewer(engine, loadCluster(t, filepath.Join("testdata", "reviews", tc.review+".cluster.json")))
			r.Validating().Handle(ctx, req)
			r.Mutating().Handle(ctx, req)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision log lines (-want +got):\n%s", diff)
			}
		})
	}
}
