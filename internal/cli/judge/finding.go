package judge

import (
	"fmt"
	"io"
	"strings"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// LastAppliedPath is where findings about the annotation itself point.
const LastAppliedPath = "metadata.annotations[" + merge.LastAppliedAnnotation + "]"

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

// FindingsOf turns decisions into findings, one per path (a decision
// without paths gives one finding with an empty path), as the audit does.
func FindingsOf(ds []policy.Decision, ref merge.ObjectRef) []Finding {
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

// PrintFindings writes one line per finding, "ACTION: message", the
// action colored when color is set; "No findings." when there are none.
func PrintFindings(w io.Writer, findings []Finding, color bool) error {
	if len(findings) == 0 {
		_, err := fmt.Fprintln(w, "No findings.")
		return err
	}
	for _, f := range findings {
		if _, err := fmt.Fprintf(w, "%s: %s\n", cli.Colored(color, actionColor(f.Action), strings.ToUpper(f.Action)), f.Message); err != nil {
			return err
		}
	}
	return nil
}

func actionColor(action string) string {
	switch policy.Action(action) {
	case policy.ActionDeny:
		return cli.ColorRed
	case policy.ActionWarn, policy.ActionRepair, policy.ActionPrune, policy.ActionDryRun:
		return cli.ColorYellow
	}
	return ""
}
