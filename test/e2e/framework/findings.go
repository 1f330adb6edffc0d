package framework

import (
	"fmt"
	"regexp"
	"strings"
)

// Actions of a finding as kubectl shows it (Finding.Action).
const (
	Warn = warn
	Deny = deny
)

// Finding is one rule's report on one field: a warning kubectl printed or
// the denial that failed the command. Path is "" for rules that name no
// single field (stale-last-applied, missing-last-applied, …).
type Finding struct {
	Action, Rule, Path string
}

func (f Finding) String() string {
	if f.Path == "" {
		return fmt.Sprintf("%s [%s]", f.Action, f.Rule)
	}
	return fmt.Sprintf("%s [%s] %s", f.Action, f.Rule, f.Path)
}

// Orphan is an orphaned-field warning at p.
func Orphan(p FieldPath) Finding { return Finding{warn, "orphaned-field", p.String()} }

// Revert is an apply-reverts-drift warning at p.
func Revert(p FieldPath) Finding { return Finding{warn, "apply-reverts-drift", p.String()} }

// Edit is an imperative-edit denial at p.
func Edit(p FieldPath) Finding { return Finding{deny, "imperative-edit", p.String()} }

// Expectation is what a correct tool reports for one command: every
// finding of Want, and nothing else except what Allowed lists.
type Expectation struct {
	Want    []Finding
	Allowed []Finding
}

// Nothing is the expectation of a command that must pass without a word.
var Nothing = Expectation{}

// Reported is one Finding read from kubectl's output, with its line.
type Reported struct {
	Finding
	Line string
}

var (
	// warningLine is how kubectl prints a warning of an admission webhook.
	warningLine = regexp.MustCompile(`^Warning: \[([a-z-]+)\] (.*)$`)
	// denialLine matches the denial of a webhook, wherever kubectl puts
	// it in its error line.
	denialLine = regexp.MustCompile(`denied the request: \[([a-z-]+)\] (.*)$`)
	// otherWarning is any other warning kubectl prints, such as its own
	// on rollout undo of an applied object.
	otherWarning = regexp.MustCompile(`^Warning: [^\[]`)
)

// leftOutLine is the warning the webhook prints in place of the warnings
// that do not fit in the API server's 4 KiB (webhook.FitWarnings).
var leftOutLine = regexp.MustCompile(`^\[apply-hygiene\] (\d+) more warnings \(([^)]*)\) left out: `)

// LeftOutCounts returns the counts by rule of a message that stands for
// the warnings left out, nil for any other message.
func LeftOutCounts(msg string) map[string]int {
	m := leftOutLine.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	counts := map[string]int{}
	for _, part := range strings.Split(m[2], ", ") {
		var n int
		var rule string
		if _, err := fmt.Sscanf(part, "%d %s", &n, &rule); err == nil {
			counts[rule] += n
		}
	}
	return counts
}

// WithoutLeftOut removes from got the warning that stands for the
// warnings left out and returns its counts by rule (nil without one).
func WithoutLeftOut(got []Reported) ([]Reported, map[string]int) {
	var out []Reported
	var counts map[string]int
	for _, g := range got {
		if c := LeftOutCounts(strings.TrimPrefix(g.Line, "Warning: ")); g.Action == warn && c != nil {
			counts = c
			continue
		}
		out = append(out, g)
	}
	return out, counts
}

// ParseOutput returns the findings of apply-hygiene in kubectl's stderr,
// one per field, and the other warnings lines.
func ParseOutput(object, stderr string) (got []Reported, others []string) {
	for _, line := range strings.Split(stderr, "\n") {
		action, m := warn, warningLine.FindStringSubmatch(line)
		if m == nil {
			action, m = deny, denialLine.FindStringSubmatch(line)
		}
		if m == nil {
			if otherWarning.MatchString(line) {
				others = append(others, line)
			}
			continue
		}
		for _, p := range messagePaths(m[1], strings.TrimPrefix(m[2], object+": ")) {
			got = append(got, Reported{Finding{action, m[1], p}, line})
		}
	}
	return got, others
}

// The path patterns of the rule messages (policy/rules/*.rego), read after
// "Kind namespace/name: ". A path never contains a space.
var (
	orphanPath = regexp.MustCompile(`^(\S+) \(`)
	revertPath = regexp.MustCompile(`^this apply (?:sets (\S+) back to |removes (\S+), discarding )`)
	editPaths  = regexp.MustCompile(`(?:owns: |, )(\S+) \((?:last-applied |now )`)
	// appliedPaths are the fields of a server-side-owned message.
	appliedPaths = regexp.MustCompile(`(?:server-side: |--server-side applied: |, )(\S+) \((?:applied |now )`)
	// restartPath is the field of server-side-owned's warning on a
	// kubectl rollout restart of an object Argo CD applies.
	restartPath = regexp.MustCompile(`^kubectl rollout restart adds (\S+), which `)
)

// messagePaths returns the field paths a rule's message names: one for
// orphaned-field and apply-reverts-drift, each listed field for
// imperative-edit and server-side-owned, "" for the rest (and for a
// message that does not parse, which then matches no expectation).
func messagePaths(rule, msg string) []string {
	switch rule {
	case "orphaned-field":
		if m := orphanPath.FindStringSubmatch(msg); m != nil {
			return []string{m[1]}
		}
	case "apply-reverts-drift":
		if m := revertPath.FindStringSubmatch(msg); m != nil {
			return []string{m[1] + m[2]}
		}
	case "imperative-edit", "server-side-owned":
		fields := editPaths
		if rule == "server-side-owned" {
			fields = appliedPaths
		}
		var out []string
		for _, m := range fields.FindAllStringSubmatch(msg, -1) {
			out = append(out, m[1])
		}
		if m := restartPath.FindStringSubmatch(msg); rule == "server-side-owned" && m != nil {
			out = append(out, m[1])
		}
		if len(out) > 0 {
			return out
		}
	}
	return []string{""}
}

// Kinds of mismatch.
const (
	FalseWarning = "false warning"
	FalseDenial  = "false denial"
	Miss         = "miss"
)

// Mismatch is one difference between what a correct tool reports and what
// kubectl printed.
type Mismatch struct {
	Object, Step, Command string
	// What is FalseWarning, FalseDenial or Miss.
	What    string
	Finding Finding
	// Line is kubectl's line for a false finding, empty for a miss.
	Line string
}

func (m Mismatch) String() string {
	detail := m.Line
	if detail == "" {
		detail = "expected " + m.Finding.String()
	}
	return fmt.Sprintf("%s: step %q ($ %s): %s: %s", m.Object, m.Step, m.Command, m.What, detail)
}

// Compare lists the false findings of got and the misses of want.
func Compare(want Expectation, got []Reported) []Mismatch {
	var out []Mismatch
	seen := map[Finding]bool{}
	for _, r := range got {
		if seen[r.Finding] {
			continue
		}
		seen[r.Finding] = true
		if contains(want.Want, r.Finding) || contains(want.Allowed, r.Finding) {
			continue
		}
		what := FalseWarning
		if r.Action == deny {
			what = FalseDenial
		}
		out = append(out, Mismatch{What: what, Finding: r.Finding, Line: r.Line})
	}
	for _, f := range want.Want {
		if !seen[f] {
			out = append(out, Mismatch{What: Miss, Finding: f})
		}
	}
	return out
}

func contains(fs []Finding, f Finding) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}
