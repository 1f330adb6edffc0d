package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/internal/tracing"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Mutating returns the handler of the mutating webhook, for a caller that
// decodes the review itself (Endpoint serves it over HTTP): it carries out
// repair and prune decisions in the same request and warns about each.
func (r *Reviewer) Mutating() admission.Handler { return passHandler(r.mutate) }

// passHandler serves pass (mutate or validate) to a caller that decoded
// the review, with a call of its own for each request.
func passHandler(pass func(ctx context.Context, c *call, req admission.Request) admission.Response) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		return pass(ctx, &call{}, req)
	})
}

// mutate is the mutating pass of c.
func (r *Reviewer) mutate(ctx context.Context, c *call, req admission.Request) admission.Response {
	c.decode.Received(ctx, &req.AdmissionRequest)
	name := passName(review.Mutate)
	started := time.Now()
	if req.SubResource == "scale" {
		// A Scale object has nothing to repair: check it, and do not
		// read its parent.
		objs, err := c.objectsOf(&req)
		if err == nil {
			_, err = review.ScaleReplicas(&req.AdmissionRequest, objs)
		}
		if err != nil {
			return r.errored(ctx, name, err)
		}
		r.opts.metrics.observe(name, "", "skipped", started, nil)
		return admission.Allowed("")
	}
	rv, err := r.reviewInTime(ctx, c, &req.AdmissionRequest, review.Mutate)
	if err != nil {
		return r.errored(ctx, name, err)
	}
	if rv == nil {
		r.opts.metrics.observe(name, rv.Classification(), "skipped", started, nil)
		return admission.Allowed("")
	}
	mutations := rv.DecisionsWith(review.Mutate.Actions()...)
	if len(mutations) == 0 {
		r.opts.metrics.observe(name, rv.Classification(), "allowed", started, nil)
		return withAudit(admission.Allowed(""), rv, nil)
	}
	_, span := tracing.Start(ctx, r.opts.tracer, tracing.SpanRepair)
	patched, err := rv.Repair(mutations)
	span.End(err)
	if err != nil {
		return r.errored(ctx, name, err)
	}
	original, err := c.original(&req)
	if err != nil {
		return r.errored(ctx, name, err)
	}
	logDecisions(ctx, rv, mutations)
	r.opts.metrics.observe(name, rv.Classification(), "patched", started, mutations)
	return withAudit(admission.PatchResponseFromRaw(original, patched).WithWarnings(FitWarnings(r.messages(policy.Spoken(mutations), requestTarget(&req)), mutatingWarningRunes, requestTarget(&req))...), rv, mutations)
}

// Validating returns the handler of the validating webhook, for a caller
// that decodes the review itself (Endpoint serves it over HTTP): it denies
// on deny decisions, warns on warn decisions and only logs dryrun
// decisions.
func (r *Reviewer) Validating() admission.Handler { return passHandler(r.validate) }

// validate is the validating pass of c.
func (r *Reviewer) validate(ctx context.Context, c *call, req admission.Request) admission.Response {
	c.decode.Received(ctx, &req.AdmissionRequest)
	name := passName(review.Validate)
	started := time.Now()
	rv, err := r.reviewInTime(ctx, c, &req.AdmissionRequest, review.Validate)
	if err != nil {
		return r.errored(ctx, name, err)
	}
	if rv == nil {
		r.opts.metrics.observe(name, "", "skipped", started, nil)
		return admission.Allowed("")
	}
	acted := rv.DecisionsWith(review.Validate.Actions()...)
	logDecisions(ctx, rv, acted)
	if len(acted) > 0 {
		r.events.record(rv, rv.DecisionsWith(policy.ActionDeny, policy.ActionWarn))
	}
	warnings := FitWarnings(r.messages(rv.DecisionsWith(policy.ActionWarn), requestTarget(&req)), validatingWarningRunes, requestTarget(&req))
	if denials := rv.DecisionsWith(policy.ActionDeny); len(denials) > 0 {
		r.opts.metrics.observe(name, rv.Classification(), "denied", started, acted)
		return withAudit(admission.Denied(strings.Join(messagesOf(denials), "\n")).WithWarnings(warnings...), rv, acted)
	}
	outcome := "allowed"
	if len(warnings) > 0 {
		outcome = "warned"
	}
	r.opts.metrics.observe(name, rv.Classification(), outcome, started, acted)
	return withAudit(admission.Allowed("").WithWarnings(warnings...), rv, acted)
}

// withAudit adds the review's audit annotations (auditAnnotations) to
// resp: which rules acted on the write, how, and its classification.
func withAudit(resp admission.Response, rv *review.Review, acted []policy.Decision) admission.Response {
	resp.AuditAnnotations = auditAnnotations(rv.Classification(), acted)
	return resp
}

// errored answers a request that could not be reviewed: 400 for a
// malformed request, else as the failure policy says.
func (r *Reviewer) errored(ctx context.Context, webhook string, err error) admission.Response {
	r.opts.metrics.observeError(webhook, err)
	tracing.Failed(ctx, failure(err))
	if isBadRequest(err) {
		return admission.Errored(http.StatusBadRequest, err)
	}
	log.FromContext(ctx).Error(err, "review failed", "failOpen", r.opts.failOpen)
	if r.opts.failOpen {
		return admission.Allowed("").WithWarnings(cutWarning(policy.Decision{Message: fmt.Sprintf("apply-hygiene could not review this request and allowed it (failure policy Ignore): %v", err)}, r.opts.maxWarning, ""))
	}
	return admission.Errored(http.StatusInternalServerError, fmt.Errorf("apply-hygiene could not review this request: %w", err))
}

// failure describes a failed review for its span: the error's text when
// apply-hygiene wrote all of it (a timeout, an overload), else the kind of
// failure alone (errorReason), since another error's text may quote a
// field's value.
func failure(err error) string {
	switch reason := errorReason(err); reason {
	case "timeout", "overload":
		return "apply-hygiene could not review this request: " + err.Error()
	case "internal":
		return "apply-hygiene could not review this request (internal error; the error's text is not recorded: it may quote a field's value)"
	default:
		return "apply-hygiene could not review this request (" + strings.ReplaceAll(reason, "_", " ") + "; the error's text is not recorded: it may quote a field's value)"
	}
}

// messages are the decisions' messages as warnings, each cut to the
// configured length with its command whole (cutWarning); target is the
// object as kubectl arguments.
func (r *Reviewer) messages(ds []policy.Decision, target string) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, cutWarning(d, r.opts.maxWarning, target))
	}
	return out
}

func messagesOf(ds []policy.Decision) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.Message)
	}
	return out
}

// logDecisions logs each decision; the logger from controller-runtime
// already names the object, the resource, the user and the request. A
// warning lets the write through unchanged (kubectl printed it, the event
// and the metrics record it) and is logged at debug (V(1)), so that a busy
// cluster's log does not grow with every apply; a denial, a repair and a
// prune refuse or change someone's write, and a dryrun decision is there to
// be logged, so they are logged at info.
func logDecisions(ctx context.Context, rv *review.Review, ds []policy.Decision) {
	logger := log.FromContext(ctx)
	for _, d := range ds {
		l := logger
		if d.Action == policy.ActionWarn {
			l = logger.V(1)
		}
		l.Info("decided", "rule", d.Rule, "action", d.Action, "classification", rv.Input.Classification,
			"fieldManager", rv.Input.Request.FieldManager, "dryRun", rv.Input.Request.DryRun, "paths", d.Paths)
	}
}
