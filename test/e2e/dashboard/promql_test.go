package dashboard_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The PromQL parser would give the names exactly, but it would pull the
// prometheus module and its dependencies into go.mod for one test: these
// regexps strip what is not a metric name from the expressions the chart
// writes (strings, label matchers, ranges, grouping labels, functions).
var (
	quoted   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	matchers = regexp.MustCompile(`\{[^}]*\}`)
	ranges   = regexp.MustCompile(`\[[^\]]*\]`)
	grouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	ident    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
)

// keywords are PromQL's binary operators and modifiers spelled as words.
var keywords = []string{"and", "or", "unless", "bool", "offset", "atan2"}

// metricNames returns the metric names that a PromQL expression reads,
// sorted and without duplicates.
func metricNames(expr string) []string {
	for _, re := range []*regexp.Regexp{quoted, matchers, ranges, grouping} {
		expr = re.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, m := range ident.FindAllStringSubmatch(expr, -1) {
		name := strings.TrimSpace(m[0])
		if m[1] != "" || slices.Contains(keywords, name) {
			continue // a function or an aggregation, or an operator
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func TestMetricNames(t *testing.T) {
	tests := map[string]struct {
		expr string
		want []string
	}{
		"a rate by labels": {
			expr: `sum by (webhook, outcome) (rate(apply_hygiene_reviews_total[$__rate_interval]))`,
			want: []string{"apply_hygiene_reviews_total"},
		},
		"a quantile with a regexp matcher": {
			expr: `histogram_quantile(0.99, sum by (name, le) (rate(apiserver_admission_webhook_admission_duration_seconds_bucket{name=~"(mutate|validate)\\.apply-hygiene\\.io"}[5m]))) > 0.5`,
			want: []string{"apiserver_admission_webhook_admission_duration_seconds_bucket"},
		},
		"unless on a label_replace": {
			expr: `a_bucket > 0.5 unless on (name) label_replace(b_bucket{x="on(y)"} > 0.5, "name", "$1.apply-hygiene.io", "webhook", "(.*)")`,
			want: []string{"a_bucket", "b_bucket"},
		},
		"time, absent, and, count": {
			expr: `time() - max(apply_hygiene_audit_last_success_timestamp_seconds) > 10800 or absent(apply_hygiene_audit_objects) and on () count(apply_hygiene_policy_set_version) > 0`,
			want: []string{"apply_hygiene_audit_last_success_timestamp_seconds", "apply_hygiene_audit_objects", "apply_hygiene_policy_set_version"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, metricNames(tc.expr)); diff != "" {
				t.Errorf("metricNames(%q) (-want +got):\n%s", tc.expr, diff)
			}
		})
	}
}
