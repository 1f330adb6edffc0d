package review

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/tracing"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Actions are the actions a pass carries out or answers with: the
// mutating webhook repairs and prunes, the validating webhook denies,
// warns and records dry runs. Every driver asks here which decisions
// belong to which pass.
func (p Pass) Actions() []policy.Action {
	if p == Mutate {
		return []policy.Action{policy.ActionRepair, policy.ActionPrune}
	}
	return []policy.Action{policy.ActionDeny, policy.ActionWarn, policy.ActionDryRun}
}

// Admission is one write as the API server admits it: the mutating pass,
// its repairs carried out on the object, then the validating pass on the
// repaired object.
type Admission struct {
	// Mutating and Validating are the passes' reviews; nil for a pass
	// with no opinion on the write (see ReviewUpdate).
	Mutating, Validating *Review
	// Repairs are the mutating pass's repair and prune decisions, carried
	// out in Patched.
	Repairs []policy.Decision
	// Patched is the object with the repairs carried out, as the mutating
	// webhook's patch leaves it; nil without repairs.
	Patched []byte
}

// Decisions returns the decisions admission acts on: the repairs, then
// the validating pass's deny, warn and dryrun decisions.
func (a *Admission) Decisions() []policy.Decision {
	out := append([]policy.Decision(nil), a.Repairs...)
	if a.Validating != nil {
		out = append(out, a.Validating.DecisionsWith(Validate.Actions()...)...)
	}
	return out
}

// Admit runs both passes on u as the API server calls the two webhooks.
// A /scale write has nothing to repair: only the validating pass sees it.
func (r *Reviewer) Admit(ctx context.Context, u Update) (*Admission, error) {
	a := &Admission{}
	if u.Subresource != "scale" {
		mutating, err := r.ReviewUpdate(ctx, u, Mutate)
		if err != nil {
			return nil, fmt.Errorf("mutating pass: %w", err)
		}
		a.Mutating = mutating
		if mutating != nil {
			a.Repairs = mutating.DecisionsWith(Mutate.Actions()...)
		}
		if len(a.Repairs) > 0 {
			_, span := tracing.Start(ctx, r.tracer, tracing.SpanRepair)
			a.Patched, err = mutating.Repair(a.Repairs)
			span.End(err)
			if err != nil {
				return nil, fmt.Errorf("mutating pass: %w", err)
			}
			repaired := &unstructured.Unstructured{}
			if err := repaired.UnmarshalJSON(a.Patched); err != nil {
				return nil, fmt.Errorf("decoding the repaired object: %w", err)
			}
			u.New = repaired
		}
	}
	validating, err := r.ReviewUpdate(ctx, u, Validate)
	if err != nil {
		return nil, fmt.Errorf("validating pass: %w", err)
	}
	a.Validating = validating
	return a, nil
}

// AdmitRequest decodes req's raw objects (DecodeObjects), checks them as
// Review does and admits the UPDATE as Admit does. A request that
// is not an UPDATE, or a /scale whose count field cannot be known, gets
// an Admission without reviews.
func (r *Reviewer) AdmitRequest(ctx context.Context, req *admissionv1.AdmissionRequest) (*Admission, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	if req.Operation != admissionv1.Update {
		return &Admission{}, nil
	}
	objs, err := DecodeObjects(req)
	if err != nil {
		return nil, err
	}
	old, new, err := r.objects(ctx, req, objs)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return &Admission{}, nil
	}
	return r.Admit(ctx, updateOf(req, old, new))
}
