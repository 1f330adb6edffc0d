package framework

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// The Prometheus pages a test reads: the server's /metrics (each replica
// has its own) and the API server's, as text or as Samples.

// WebhookMetrics returns the webhook server's /metrics page (the first
// replica's); it fails t when the server does not answer.
func WebhookMetrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(Webhook(t).MetricsURL)
	if err != nil {
		t.Fatalf("scraping metrics: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scraping metrics: %v", err)
	}
	return string(body)
}

// PollWebhookMetrics is ReplicaMetrics of the webhook server's first
// replica: what a poll reads.
func PollWebhookMetrics(ctx context.Context, t *testing.T) string {
	t.Helper()
	return ReplicaMetrics(ctx, Webhook(t).Replicas()[0])
}

// ReplicaMetrics returns replica r's /metrics page, or "" while r does
// not answer (stopped, restarting, killed): a poll reads again.
func ReplicaMetrics(ctx context.Context, r *devenv.Replica) string {
	body, err := r.Metrics(ctx)
	if err != nil {
		return ""
	}
	return body
}

// APIServerMetrics scrapes the API server's /metrics page as the admin.
func (f *Framework) APIServerMetrics(t *testing.T) string {
	t.Helper()
	raw, err := f.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("scraping the API server: %v", err)
	}
	return string(raw)
}

// MetricLines returns the lines of page that start with prefix, such as
// `apply_hygiene_audit_fixes_total{`.
func MetricLines(page, prefix string) []string {
	var out []string
	for l := range strings.SplitSeq(page, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// Samples are the samples of a Prometheus text page by series: the
// metric's name with its labels as printed, such as
// `apply_hygiene_reviews_total{classification="imperative",outcome="denied",webhook="validate"}`.
type Samples map[string]float64

// ParseSamples reads the samples of the metrics named from page, or of
// every metric when no name is given; it fails t on a value it cannot
// read.
func ParseSamples(t *testing.T, page string, names ...string) Samples {
	t.Helper()
	out := Samples{}
	for line := range strings.SplitSeq(page, "\n") {
		if line == "" || line[0] == '#' || !named(line, names) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("reading the metric sample %q: no value", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("reading the metric sample %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// named reports whether the sample line is of one of the metrics names,
// or names is empty.
func named(line string, names []string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if rest, ok := strings.CutPrefix(line, n); ok && (strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ")) {
			return true
		}
	}
	return false
}

// Sum adds the samples of metric name whose series match (every one when
// match is nil).
func (s Samples) Sum(name string, match func(series string) bool) float64 {
	var n float64
	for series, v := range s {
		if (series == name || strings.HasPrefix(series, name+"{")) && (match == nil || match(series)) {
			n += v
		}
	}
	return n
}

// Label returns the value of label name in series, "" when series has
// no such label.
func Label(series, name string) string {
	m := regexp.MustCompile(`[{,]` + regexp.QuoteMeta(name) + `="([^"]*)"`).FindStringSubmatch(series)
	if m == nil {
		return ""
	}
	return m[1]
}
