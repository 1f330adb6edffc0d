package webhook

import (
	"strings"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// The keys of the audit annotations every review returns. The API server
// records them in its audit log prefixed with the webhook's name:
// "validate.apply-hygiene.io/rule".
const (
	// AuditRule lists the rules that acted on the write, comma-separated,
	// in the order of AuditAction.
	AuditRule = "rule"
	// AuditAction lists what each of those rules did: deny, warn, dryrun,
	// repair or prune; "allow" when none acted.
	AuditAction = "action"
	// AuditClassification is the write's classification (policy input
	// classification).
	AuditClassification = "classification"
)

// actionAllow is the audit action of a review no rule acted on.
const actionAllow = "allow"

// auditAnnotations are the audit annotations of a review classified class
// on which acted acted.
func auditAnnotations(class policy.Classification, acted []policy.Decision) map[string]string {
	if len(acted) == 0 {
		// A new map for each answer, never one shared between answers:
		// the caller of Validating or Mutating owns the answer and may add
		// to its annotations, also while other reviews are answered.
		return map[string]string{AuditAction: actionAllow, AuditClassification: string(class)}
	}
	rules := make([]string, 0, len(acted))
	actions := make([]string, 0, len(acted))
	for _, d := range acted {
		rules = append(rules, string(d.Rule))
		actions = append(actions, string(d.Action))
	}
	return map[string]string{
		AuditRule:           strings.Join(rules, ","),
		AuditAction:         strings.Join(actions, ","),
		AuditClassification: string(class),
	}
}
