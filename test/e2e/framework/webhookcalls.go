package framework

import (
	"strings"
	"testing"
)

// WebhookCalls are the API server's counts of its calls to apply-hygiene's
// two webhooks, from its /metrics, as an operator's dashboard reads them.
type WebhookCalls struct {
	// FailedOpen are the calls that failed under failurePolicy Ignore and
	// let their write through unreviewed
	// (apiserver_admission_webhook_fail_open_count).
	FailedOpen int
	// Errors are the calls that failed and rejected their write under
	// failurePolicy Fail: the webhook could not be called, timed out or
	// answered garbage (apiserver_admission_webhook_rejection_count with
	// an error_type other than no_error).
	Errors int
	// Denials are the writes the webhook denied
	// (apiserver_admission_webhook_rejection_count, error_type no_error).
	Denials int
}

// Sub returns the calls counted since before.
func (c WebhookCalls) Sub(before WebhookCalls) WebhookCalls {
	return WebhookCalls{FailedOpen: c.FailedOpen - before.FailedOpen, Errors: c.Errors - before.Errors, Denials: c.Denials - before.Denials}
}

// WebhookCalls scrapes the API server's counts of its calls to
// apply-hygiene's webhooks, summed over both.
func (f *Framework) WebhookCalls(t *testing.T) WebhookCalls {
	t.Helper()
	const failOpen, rejection = "apiserver_admission_webhook_fail_open_count", "apiserver_admission_webhook_rejection_count"
	samples := ParseSamples(t, f.APIServerMetrics(t), failOpen, rejection)
	ours := func(series string) bool { return strings.HasSuffix(Label(series, "name"), ".apply-hygiene.io") }
	denial := func(series string) bool { return ours(series) && Label(series, "error_type") == "no_error" }
	return WebhookCalls{
		FailedOpen: int(samples.Sum(failOpen, ours)),
		Denials:    int(samples.Sum(rejection, denial)),
		Errors:     int(samples.Sum(rejection, func(series string) bool { return ours(series) && !denial(series) })),
	}
}
