package audit

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apply-hygiene/apply-hygiene/internal/events"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Classification is the policy input's classification for a stored
// object; each rule's audit branch (policy/rules/<rule>.rego) decides
// about it.
const Classification = policy.Audit

// Finding is one rule hit on one field of a stored object, in the JSON
// form of `kubectl hygiene audit -o json` (docs/cli.md).
type Finding struct {
	// Rule is the rule ID, e.g. policy.RuleImperativeEdit.
	Rule policy.RuleID `json:"rule"`
	// Action is the rule's configured action for the object.
	Action policy.Action `json:"action"`
	// Path is the field, in kubectl's notation.
	Path string `json:"path"`
	// Message is the one-line message; it starts with "[<rule>]".
	Message string `json:"message"`
	// Command is the kubectl command that fixes the finding, the
	// decision's (policy.Decision.Command); "" when the message names none.
	Command string `json:"fix,omitempty"`
	// Object names the object.
	Object merge.ObjectRef `json:"object"`
	// UID is the object's UID, for events.
	UID types.UID `json:"-"`
	// Fix is what fixes the finding, nil when nothing can safely fix it
	// without a person (kubectl hygiene audit --fix), or when the fix is
	// out of the scan's FixScope (then NoFix says why).
	Fix *Fix `json:"-"`
	// NoFix says why a finding that has a fix gets none: out of the scan's
	// FixScope, or nothing safe to write. "" otherwise.
	NoFix string `json:"-"`
	// Resource is the object's resource, as the scan listed it: a fix
	// reads the object again through it right before writing.
	Resource schema.GroupVersionResource `json:"-"`
}

// ObjectError is an object that could not be analyzed; the scan goes on.
type ObjectError struct {
	// Object names the object.
	Object merge.ObjectRef `json:"object"`
	// Err says what went wrong.
	Err error `json:"-"`
}

func (e ObjectError) Error() string {
	return "analyzing " + e.Object.Kind + " " + objectName(e.Object) + ": " + e.Err.Error()
}

func (e ObjectError) Unwrap() error { return e.Err }

// Report is the outcome of one scan.
type Report struct {
	// Findings are sorted by namespace, kind, name, rule and path.
	Findings []Finding `json:"findings"`
	// Objects counts the objects scanned.
	Objects int `json:"objects"`
	// Namespaces counts the objects scanned per namespace ("" for the
	// cluster-scoped ones), with or without findings.
	Namespaces map[string]int `json:"-"`
	// Errors lists the objects that could not be analyzed.
	Errors []ObjectError `json:"-"`
}

// Denied reports whether any finding's action is deny.
func (r *Report) Denied() bool {
	for _, f := range r.Findings {
		if f.Action == policy.ActionDeny {
			return true
		}
	}
	return false
}

// EventReason turns a rule ID into an event reason in CamelCase:
// "imperative-edit" becomes "ImperativeEdit".
func EventReason(rule policy.RuleID) string { return events.Reason(string(rule)) }

func objectName(ref merge.ObjectRef) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}
