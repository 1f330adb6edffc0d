package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Mutating returns the handler of the mutating webhook: it carries out
// repair and prune decisions in the same request and warns about each.
func (r *Reviewer) Mutating() admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		started := time.Now()
		if req.SubResource == "scale" {
			// A Scale object has nothing to repair: check it, and do not
			// read its parent.
			if _, err := scaleReplicas(&req.AdmissionRequest); err != nil {
				return r.errored(ctx, "mutate", err)
			}
			r.opts.metrics.observe("mutate", "", "skipped", started, nil)
			return admission.Allowed("")
		}
		rv, err := r.reviewInTime(ctx, &req.AdmissionRequest, repairable)
		if err != nil {
			return r.errored(ctx, "mutate", err)
		}
		if rv == nil {
			r.opts.metrics.observe("mutate", rv.classification(), "skipped", started, nil)
			return admission.Allowed("")
		}
		mutations := rv.decisionsWith(policy.ActionRepair, policy.ActionPrune)
		if len(mutations) == 0 {
			r.opts.metrics.observe("mutate", rv.classification(), "allowed", started, nil)
			return admission.Allowed("")
		}
		patched, err := r.mutate(rv, mutations)
		if err != nil {
			return r.errored(ctx, "mutate", err)
		}
		logDecisions(ctx, rv, mutations)
		r.opts.metrics.observe("mutate", rv.classification(), "patched", started, mutations)
		return admission.PatchResponseFromRaw(req.Object.Raw, patched).WithWarnings(r.messages(mutations)...)
	})
}

// Validating returns the handler of the validating webhook: it denies on
// deny decisions, warns on warn decisions and only logs dryrun decisions.
func (r *Reviewer) Validating() admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		started := time.Now()
		rv, err := r.reviewInTime(ctx, &req.AdmissionRequest, anyWrite)
		if err != nil {
			return r.errored(ctx, "validate", err)
		}
		if rv == nil {
			r.opts.metrics.observe("validate", "", "skipped", started, nil)
			return admission.Allowed("")
		}
		acted := rv.decisionsWith(policy.ActionDeny, policy.ActionWarn, policy.ActionDryRun)
		logDecisions(ctx, rv, acted)
		warnings := r.messages(rv.decisionsWith(policy.ActionWarn))
		if denials := rv.decisionsWith(policy.ActionDeny); len(denials) > 0 {
			r.opts.metrics.observe("validate", rv.classification(), "denied", started, acted)
			return admission.Denied(strings.Join(messagesOf(denials), "\n")).WithWarnings(warnings...)
		}
		outcome := "allowed"
		if len(warnings) > 0 {
			outcome = "warned"
		}
		r.opts.metrics.observe("validate", rv.classification(), outcome, started, acted)
		return admission.Allowed("").WithWarnings(warnings...)
	})
}

// errored answers a request that could not be reviewed: 400 for a
// malformed request, else as the failure policy says.
func (r *Reviewer) errored(ctx context.Context, webhook string, err error) admission.Response {
	r.opts.metrics.observeError(webhook, err)
	if isBadRequest(err) {
		return admission.Errored(http.StatusBadRequest, err)
	}
	log.FromContext(ctx).Error(err, "review failed", "failOpen", r.opts.failOpen)
	if r.opts.failOpen {
		return admission.Allowed("").WithWarnings(r.cut(fmt.Sprintf("apply-hygiene could not review this request and allowed it (failure policy Ignore): %v", err)))
	}
	return admission.Errored(http.StatusInternalServerError, fmt.Errorf("apply-hygiene could not review this request: %w", err))
}

// classification is the review's classification; "" for none.
func (rv *review) classification() policy.Classification {
	if rv == nil {
		return ""
	}
	return rv.input.Classification
}

func (rv *review) decisionsWith(actions ...policy.Action) []policy.Decision {
	var out []policy.Decision
	for _, d := range rv.decisions {
		for _, a := range actions {
			if d.Action == a {
				out = append(out, d)
			}
		}
	}
	return out
}

// messages are the decisions' messages as warnings, each cut to the
// configured length.
func (r *Reviewer) messages(ds []policy.Decision) []string {
	out := make([]string, 0, len(ds))
	for _, m := range messagesOf(ds) {
		out = append(out, r.cut(m))
	}
	return out
}

func (r *Reviewer) cut(s string) string {
	if len(s) <= r.opts.maxWarning {
		return s
	}
	return s[:r.opts.maxWarning-len("…")] + "…"
}

func messagesOf(ds []policy.Decision) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.Message)
	}
	return out
}

// logDecisions logs each decision; the logger from controller-runtime
// already names the object, the resource, the user and the request.
func logDecisions(ctx context.Context, rv *review, ds []policy.Decision) {
	logger := log.FromContext(ctx)
	for _, d := range ds {
		logger.Info("decided", "rule", d.Rule, "action", d.Action, "classification", rv.input.Classification,
			"fieldManager", rv.input.Request.FieldManager, "dryRun", rv.input.Request.DryRun, "paths", d.Paths)
	}
}
