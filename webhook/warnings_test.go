package webhook

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestFitWarnings(t *testing.T) {
	orphan := func(i int) string {
		return fmt.Sprintf("[orphaned-field] Deployment default/web: metadata.labels[team-%d] (\"a\") is in neither your manifest nor last-applied, so kubectl apply will never remove it. Remove it with: %s", i, strings.Repeat("x", 300))
	}
	drift := "[apply-reverts-drift] Deployment default/web: this apply sets spec.replicas back to 3, discarding 5 set by alice since the last apply."
	target := "deployment/web -n default"
	tests := map[string]struct {
		warnings []string
		budget   int
		want     []string
	}{
		"within the budget: unchanged": {
			warnings: []string{orphan(1), drift}, budget: validatingWarningRunes,
			want: []string{orphan(1), drift},
		},
		"past it: the first whole, the rest counted by rule": {
			warnings: []string{orphan(1), orphan(2), orphan(3), orphan(4), orphan(5), orphan(6), orphan(7), orphan(8), drift},
			budget:   validatingWarningRunes,
			want: []string{orphan(1), orphan(2), orphan(3), orphan(4),
				"[apply-hygiene] 5 more warnings (4 orphaned-field, 1 apply-reverts-drift) left out: the API server passes on at most 4 KiB of warnings for a write. See every finding with: kubectl hygiene explain deployment/web -n default"},
		},
		"not even one fits: only the count": {
			warnings: []string{orphan(1), orphan(2)}, budget: 300,
			want: []string{"[apply-hygiene] 2 more warnings (2 orphaned-field) left out: the API server passes on at most 4 KiB of warnings for a write. See every finding with: kubectl hygiene explain deployment/web -n default"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := FitWarnings(tc.warnings, tc.budget, target)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FitWarnings (-want +got):\n%s", diff)
			}
			if len(got) > 1 || len(tc.warnings) == len(got) {
				total := 0
				for _, w := range got {
					total += utf8.RuneCountInString(w)
				}
				if total > tc.budget {
					t.Errorf("%d runes, over the budget %d", total, tc.budget)
				}
			}
		})
	}
}

// The two webhooks' shares leave a quarter of the API server's limit to
// the other warnings of a write (a Pod Security warning takes 300 to 600).
func TestWarningSharesFitTheAPIServersLimit(t *testing.T) {
	if got := mutatingWarningRunes + validatingWarningRunes + othersWarningRunes; got != 4*1024 {
		t.Errorf("shares add up to %d runes, want the API server's 4096", got)
	}
	if othersWarningRunes < 4096/5 {
		t.Errorf("%d runes left to other warnings, want at least a fifth of 4096", othersWarningRunes)
	}
}
