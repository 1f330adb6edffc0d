package main

import (
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// lastAppliedPath is where findings about the annotation itself point.
const lastAppliedPath = "metadata.annotations[" + merge.LastAppliedAnnotation + "]"

// Finding is one policy decision on one field, as every command prints it
// (docs/cli.md). Rule, Action, Message and Fix are the decision's, as
// the webhook would answer them; Fix is the command the message shows
// (policy.Decision.Command), "" when it shows none.
type Finding struct {
	Rule    policy.RuleID   `json:"rule"`
	Action  string          `json:"action"`
	Path    string          `json:"path"`
	Message string          `json:"message"`
	Fix     string          `json:"fix,omitempty"`
	Object  merge.ObjectRef `json:"object"`
}

// findingsOf turns decisions into findings, one per path (a decision
// without paths gives one finding with an empty path), as the audit does.
func findingsOf(ds []policy.Decision, ref merge.ObjectRef) []Finding {
	out := []Finding{}
	for _, d := range ds {
		paths := d.Paths
		if len(paths) == 0 {
			paths = []string{""}
		}
		for _, p := range paths {
			out = append(out, Finding{Rule: d.Rule, Action: string(d.Action), Path: p, Message: d.Message, Fix: d.Command, Object: ref})
		}
	}
	return out
}
