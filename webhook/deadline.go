package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

// answerShare is the part of the API server's timeout a review may take;
// the rest is for the answer to travel back.
const answerShare = 0.8

// errTooSlow marks a review that did not finish before its deadline.
var errTooSlow = errors.New("the review did not finish")

// errPanicked is a review that panicked (recovered, answered as a failed
// review).
var errPanicked = errors.New("panic")

// withAPIServerDeadline returns r's context with a deadline of
// answerShare of the timeout the API server sends with each webhook call
// (the `timeout` query parameter, e.g. "5s"), and that timeout, so that a
// slow review is answered as the failure policy says, with a message,
// before the API server gives up on the call with only "context deadline
// exceeded". A request without the parameter keeps its context (timeout
// 0).
func withAPIServerDeadline(r *http.Request) (context.Context, time.Duration, context.CancelFunc) {
	timeout, err := time.ParseDuration(r.URL.Query().Get("timeout"))
	if err != nil || timeout <= 0 {
		return r.Context(), 0, func() {}
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(float64(timeout)*answerShare))
	return ctx, timeout, cancel
}

// reviewInTime is the core's review of req (coreReview), answered by
// ctx's deadline at the latest; c's reservation is held until the review
// ends. Merge does not look at ctx, so a review past its deadline goes on
// in the background until it ends; its result is dropped. The policy
// engine and the API reads stop at the deadline themselves.
func (r *Reviewer) reviewInTime(ctx context.Context, c *call, req *admissionv1.AdmissionRequest, pass review.Pass) (*review.Review, error) {
	if _, ok := ctx.Deadline(); !ok {
		return r.coreReview(ctx, c, req, pass)
	}
	budget := "its deadline"
	if timeout := c.timeout; timeout > 0 {
		budget = fmt.Sprintf("%s (%d %% of the API server's timeout of %s)",
			time.Duration(float64(timeout)*answerShare), int(answerShare*100), timeout)
	}
	type result struct {
		rv       *review.Review
		err      error
		panicked any
	}
	done := make(chan result, 1) // never blocks the abandoned review
	release := c.hold()          // the memory stays in use until the review ends
	go func() {
		defer release()
		defer func() {
			// A panic here would end the process: it is logged with its
			// stack (the request's goroutine raises it again, with a
			// stack of its own) and handed to the request's goroutine,
			// whose recover answers it as it answers a review without a
			// deadline. Past the deadline the request was answered as a
			// timeout already: the panic is counted here.
			if p := recover(); p != nil {
				log.FromContext(ctx).Error(fmt.Errorf("%v", p), "the review panicked", "stack", string(debug.Stack()))
				if ctx.Err() != nil {
					r.opts.metrics.observeError(passName(pass), errPanicked)
				}
				done <- result{panicked: p}
			}
		}()
		rv, err := r.coreReview(ctx, c, req, pass)
		done <- result{rv: rv, err: err}
	}()
	select {
	case res := <-done:
		if res.panicked != nil {
			panic(res.panicked)
		}
		return res.rv, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w within %s", errTooSlow, budget)
	}
}

// coreReview is the core's ReviewDecoded on c's objects, or its Review of
// req's raw objects when c has none.
func (r *Reviewer) coreReview(ctx context.Context, c *call, req *admissionv1.AdmissionRequest, pass review.Pass) (*review.Review, error) {
	if c.objects == nil {
		return r.core.Review(ctx, req, pass)
	}
	return r.core.ReviewDecoded(ctx, req, c.objects, pass)
}

// passName names the webhook of pass in metrics: "mutate" or "validate".
func passName(pass review.Pass) string {
	if pass == review.Mutate {
		return "mutate"
	}
	return "validate"
}
