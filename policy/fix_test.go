package policy

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFixCommand(t *testing.T) {
	tests := map[string]struct {
		message string
		want    string
	}{
		"an imperative edit names edit-last-applied": {
			message: "[imperative-edit] Deployment shop/web: … deleting it from last-applied first with: kubectl apply edit-last-applied deployment/web -n shop",
			want:    "kubectl apply edit-last-applied deployment/web -n shop",
		},
		"a replicas reset ends its command at the comma": {
			message: "[replicas-reset] Deployment shop/web: … first delete it from last-applied with: kubectl apply edit-last-applied deployment/web -n shop, then apply the manifest without it.",
			want:    "kubectl apply edit-last-applied deployment/web -n shop",
		},
		"a JSON patch in single quotes is kept whole, commas and quotes included": {
			message: `[orphaned-field] Deployment shop/web: … Remove it with: kubectl patch deployment/web -n shop --type=json -p '[{"op":"test","path":"/metadata/labels/note","value":"it'\''s, with: x"},{"op":"remove","path":"/metadata/labels/note"}]'`,
			want:    `kubectl patch deployment/web -n shop --type=json -p '[{"op":"test","path":"/metadata/labels/note","value":"it'\''s, with: x"},{"op":"remove","path":"/metadata/labels/note"}]'`,
		},
		"a final full stop is not part of the command": {
			message: "[x] Deployment shop/web: fix it with: kubectl hygiene explain deployment/web -n shop.",
			want:    "kubectl hygiene explain deployment/web -n shop",
		},
		"server-side apply is advice, not a fix command after with:": {
			message: "[last-applied-too-large] Deployment shop/web: … which keeps no last-applied: kubectl apply --server-side -f <manifest>",
			want:    "",
		},
		"a user policy's message without a command": {
			message: "[team-label] Deployment shop/web has no team label",
			want:    "",
		},
		"with: followed by something else than kubectl": {
			message: "[x] fix it with: helm upgrade",
			want:    "",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FixCommand(tc.message)); diff != "" {
				t.Errorf("FixCommand (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFixCommandOfEveryBundledMessage evaluates every fixture of testdata,
// as admission (its own classification) and as the audit, and requires
// every message that names a command after "with: " to yield it: a
// command that starts with kubectl, is part of the message, and is not
// followed by more than the message's last sentence.
func TestFixCommandOfEveryBundledMessage(t *testing.T) {
	e := newEngine(t)
	dirs, err := fs.ReadDir(fixtures, "testdata")
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
				fix := FixCommand(d.Message)
				if !strings.Contains(d.Message, "with: kubectl ") {
					if fix != "" {
						t.Errorf("%s %s: FixCommand = %q of a message without a command: %s", dir.Name(), d.Rule, fix, d.Message)
					}
					continue
				}
				withCommand[d.Rule] = true
				if !strings.HasPrefix(fix, "kubectl ") || !strings.Contains(d.Message, "with: "+fix) {
					t.Errorf("%s %s: FixCommand = %q, not the command of: %s", dir.Name(), d.Rule, fix, d.Message)
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
