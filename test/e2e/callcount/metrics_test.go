package callcount_test

import (
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Webhook names of the chart.
const (
	mutateName   = "mutate.apply-hygiene.io"
	validateName = "validate.apply-hygiene.io"
)

// counts is one reading of every counter the test compares.
type counts struct {
	// server is apply_hygiene_reviews_total of the apply-hygiene server.
	server framework.Samples
	// apiserver holds the API server's request and admission counters.
	apiserver framework.Samples
}

// read scrapes the apply-hygiene server and the API server.
func read(t *testing.T, f *framework.Framework) counts {
	t.Helper()
	return counts{
		server: framework.ParseSamples(t, framework.WebhookMetrics(t), "apply_hygiene_reviews_total"),
		apiserver: framework.ParseSamples(t, f.APIServerMetrics(t), "apiserver_request_total",
			"apiserver_admission_webhook_request_total", "apiserver_admission_match_condition_exclusions_total"),
	}
}

// reviews is the number of reviews of one webhook (mutate, validate).
func (c counts) reviews(webhook string) float64 {
	return c.server.Sum("apply_hygiene_reviews_total", func(s string) bool { return framework.Label(s, "webhook") == webhook })
}

// acted is the number of reviews that warned, denied, patched or failed:
// everything but a plain allow (or skip).
func (c counts) acted() float64 {
	return c.server.Sum("apply_hygiene_reviews_total", func(s string) bool {
		o := framework.Label(s, "outcome")
		return o != "allowed" && o != "skipped"
	})
}

// calls is the number of calls the API server made to a webhook.
func (c counts) calls(name string) float64 {
	return c.apiserver.Sum("apiserver_admission_webhook_request_total", func(s string) bool { return framework.Label(s, "name") == name })
}

// excluded is the number of calls a webhook's matchConditions spared.
func (c counts) excluded(name string) float64 {
	return c.apiserver.Sum("apiserver_admission_match_condition_exclusions_total", func(s string) bool { return framework.Label(s, "name") == name })
}

// writes is the number of write requests (PUT, PATCH, APPLY) to one
// resource ("group/resource" or "group/resource/subresource").
func (c counts) writes(resource string) float64 {
	return c.apiserver.Sum("apiserver_request_total", func(s string) bool {
		switch framework.Label(s, "verb") {
		case "PUT", "PATCH", "APPLY":
		default:
			return false
		}
		r := framework.Label(s, "group") + "/" + framework.Label(s, "resource")
		if sub := framework.Label(s, "subresource"); sub != "" {
			r += "/" + sub
		}
		return r == resource
	})
}

// delta is after minus before of one reading.
func delta(before, after counts, read func(counts) float64) int {
	return int(read(after) - read(before))
}
