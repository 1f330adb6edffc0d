// Package memory holds the tests of apply-hygiene's memory under
// adversarial load: reviews of the largest objects the API server accepts
// (two ~1.5 MiB objects in one ~3 MiB AdmissionReview), sent 16 at a time.
//
// TestReviewCostFactor measures, in-process, how much memory one such
// review holds at its peak per byte of its body, the factor the webhook's
// memory budget reserves (webhook.WithMemoryBudget). TestLargeReviewsStayUnder
// TheChartMemoryLimit builds cmd/apply-hygiene, runs it with GOMEMLIMIT as
// the chart sets it from its default memory limit, against a stub API server (the
// reviews only read their namespace), sends the 16 concurrent reviews for
// a few seconds, and checks the server's peak RSS (VmHWM) against the
// limit and that the reviews beyond the budget were answered "overload".
//
// Run it with
//
//	go test ./test/memory -v -run . -count 1
//
// docs/performance.md ("Memory under adversarial load") records the
// numbers.
package memory
