package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apply-hygiene/apply-hygiene/internal/events"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// FixedReason is the reason of the Normal event recorded on each object
// that the periodic audit fixed.
const FixedReason = "AuditFixed"

// Results of apply_hygiene_audit_fixes_total.
const (
	fixApplied  = "applied"
	fixConflict = "conflict"
	fixError    = "error"
)

// newFixesCounter returns apply_hygiene_audit_fixes_total, registered on
// reg when there is one.
func newFixesCounter(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apply_hygiene_audit_fixes_total",
		Help: "Findings the periodic audit fixed (audit.fix), by rule and result: applied, conflict (the object changed or went since the scan; nothing was written) or error.",
	}, []string{"rule", "result"})
	if reg == nil {
		return c, nil
	}
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("registering the audit fixes counter: %w", err)
	}
	return c, nil
}

// fix writes the fixes of report's findings with the Fixer, if any, and
// returns the report without the findings it fixed: the gauges, events
// and policy reports then show what is left. Each object is read and
// analyzed again right before its write (Scanner.Recheck), and the write
// is pinned to what that read; an object whose fix no longer holds is
// left as it is and counted as a conflict. Each object fixed gets a log
// line and a Normal event AuditFixed; a fix that fails leaves its
// findings in the report.
func (r *Runner) fix(ctx context.Context, report *Report) *Report {
	if r.opts.Fixer == nil {
		return report
	}
	log := logr.FromContextOrDiscard(ctx).WithName("audit")
	fixes, _, _ := PlanFixes(report.Findings)
	fixed := map[findingKey]bool{}
	for _, of := range fixes {
		result := r.writeFix(ctx, log, of)
		for _, f := range of.Findings() {
			r.fixes.WithLabelValues(string(f.Rule), result).Inc()
			if result == fixApplied {
				fixed[keyOf(f)] = true
			}
		}
	}
	if len(fixed) == 0 {
		return report
	}
	left := *report
	left.Findings = []Finding{}
	for _, f := range report.Findings {
		if !fixed[keyOf(f)] {
			left.Findings = append(left.Findings, f)
		}
	}
	return &left
}

// writeFix writes one object's fix, logs and records it, and returns the
// result for the counter.
func (r *Runner) writeFix(ctx context.Context, log logr.Logger, of *ObjectFix) string {
	ref := of.Object
	fresh, err := r.scanner.WriteFresh(ctx, r.opts.Fixer, of)
	if fresh != nil {
		of = fresh
	}
	switch {
	case errors.Is(err, ErrChanged) || errors.Is(err, ErrGone):
		log.Info("audit left an object unfixed: it changed since the scan", "kind", ref.Kind, "namespace", ref.Namespace, "name", ref.Name, "reason", err.Error())
		return fixConflict
	case err != nil:
		if ctx.Err() == nil {
			log.Error(redacted(ref, err), "audit could not fix an object", "kind", ref.Kind, "namespace", ref.Namespace, "name", ref.Name)
		}
		return fixError
	}
	summary := of.Summary()
	log.Info("audit fixed an object", "kind", ref.Kind, "namespace", ref.Namespace, "name", ref.Name, "fix", summary)
	if r.opts.Recorder != nil && of.UID != "" {
		note := "apply-hygiene's audit fixed it (field manager " + r.opts.Fixer.Manager(of) + "): " + summary
		r.opts.Recorder.Eventf(events.Regarding(ref.APIVersion, ref.Kind, ref.Namespace, ref.Name, of.UID), nil, corev1.EventTypeNormal, FixedReason, EventAction, "%s", truncate(note, maxNote))
	}
	return fixApplied
}

// redacted is err, but for a Secret only the API server's reason: a validation error may quote a field's value, and a Secret's
// values stay out of the log.
func redacted(ref merge.ObjectRef, err error) error {
	if ref.Kind != "Secret" || ref.APIVersion != "v1" {
		return err
	}
	return fmt.Errorf("patching the Secret: the API server answered %s (its message is not logged)", apierrors.ReasonForError(err))
}

// findingKey is one finding: its rule on one field of one object.
type findingKey struct {
	object merge.ObjectRef
	rule   policy.RuleID
	path   string
}

// keyOf is the key of f: its object, rule and path.
func keyOf(f Finding) findingKey {
	return findingKey{object: f.Object, rule: f.Rule, path: f.Path}
}
