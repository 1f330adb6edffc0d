package policy

import (
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCommandOfEveryBundledDecision evaluates every fixture of testdata,
// as admission (its own classification) and as the audit, and requires
// every decision whose message names a command after "with: kubectl " to
// carry it as its Command: a command that starts with kubectl, is the one
// the message shows, and is followed by no more than the message's last
// sentence; a decision whose message names none carries none.
func TestCommandOfEveryBundledDecision(t *testing.T) {
	e := newEngine(t)
	dirs, err := inputDirs()
	if err != nil {
		t.Fatal(err)
	}
	withCommand := map[RuleID]bool{}
	for _, dir := range dirs {
		for _, classification := range []Classification{"", "audit"} {
			in := loadInput(t, path.Base(dir.Name()))
			if classification != "" {
				in.Classification = classification
			}
			got, err := e.Evaluate(t.Context(), in)
			if err != nil {
				t.Fatalf("%s: Evaluate: %v", dir.Name(), err)
			}
			for _, d := range got {
				fix := d.Command
				if !strings.Contains(d.Message, "with: kubectl ") {
					if fix != "" {
						t.Errorf("%s %s: Command = %q of a message without a command: %s", dir.Name(), d.Rule, fix, d.Message)
					}
					continue
				}
				withCommand[d.Rule] = true
				if !strings.HasPrefix(fix, "kubectl ") || !strings.Contains(d.Message, "with: "+fix) {
					t.Errorf("%s %s: Command = %q, not the command of: %s", dir.Name(), d.Rule, fix, d.Message)
				}
				rest := d.Message[strings.LastIndex(d.Message, fix)+len(fix):]
				if rest != "" && rest != "." && !strings.HasPrefix(rest, ", then ") {
					t.Errorf("%s %s: the message goes on after the command %q: %q", dir.Name(), d.Rule, fix, rest)
				}
			}
		}
	}
	// The rules whose messages name a command (last-applied-too-large's
	// server-side apply is advice; defaulted-dependent's repair needs none).
	want := map[RuleID]bool{
		RuleImperativeEdit: true, RuleApplyRevertsDrift: true, RuleOrphanedField: true, RuleStaleLastApplied: true,
		RuleReplicasReset: true, RuleMissingLastApplied: true, RuleInvalidLastApplied: true,
	}
	if diff := cmp.Diff(want, withCommand); diff != "" {
		t.Errorf("rules whose fixtures yield a fix command (-want +got):\n%s", diff)
	}
}
