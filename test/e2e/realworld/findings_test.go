package realworld_test

import (
	"fmt"
	"regexp"
	"strings"
)

// Actions of a finding as kubectl shows it.
const (
	warn = "warning"
	deny = "denial"
)

// finding is one rule's report on one field: a warning kubectl printed or
// the denial that failed the command. path is "" for rules that name no
// single field (stale-last-applied, missing-last-applied, …).
type finding struct {
	action, rule, path string
}

func (f finding) String() string {
	if f.path == "" {
		return fmt.Sprintf("%s [%s]", f.action, f.rule)
	}
	return fmt.Sprintf("%s [%s] %s", f.action, f.rule, f.path)
}

// orphan, revert and edit are the findings the truth model predicts.
func orphan(p fieldPath) finding { return finding{warn, "orphaned-field", p.String()} }
func revert(p fieldPath) finding { return finding{warn, "apply-reverts-drift", p.String()} }
func edit(p fieldPath) finding   { return finding{deny, "imperative-edit", p.String()} }

// expectation is what a correct tool reports for one command: every
// finding of want, and nothing else except what allowed lists.
type expectation struct {
	want    []finding
	allowed []finding
}

// nothing is the expectation of a command that must pass without a word.
var nothing = expectation{}

// reported is one finding read from kubectl's output, with its line.
type reported struct {
	finding
	line string
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

// parseOutput returns the findings of apply-hygiene in kubectl's stderr,
// one per field, and the other warnings lines.
func parseOutput(object, stderr string) (got []reported, others []string) {
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
			got = append(got, reported{finding{action, m[1], p}, line})
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
)

// messagePaths returns the field paths a rule's message names: one for
// orphaned-field and apply-reverts-drift, each listed field for
// imperative-edit, "" for the rest (and for a message that does not
// parse, which then matches no expectation).
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
	case "imperative-edit":
		var out []string
		for _, m := range editPaths.FindAllStringSubmatch(msg, -1) {
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
	falseWarning = "false warning"
	falseDenial  = "false denial"
	miss         = "miss"
)

// mismatch is one difference between what a correct tool reports and what
// kubectl printed.
type mismatch struct {
	object, step, command string
	// what is falseWarning, falseDenial or miss.
	what    string
	finding finding
	// line is kubectl's line for a false finding, empty for a miss.
	line string
}

func (m mismatch) String() string {
	detail := m.line
	if detail == "" {
		detail = "expected " + m.finding.String()
	}
	return fmt.Sprintf("%s: step %q ($ %s): %s: %s", m.object, m.step, m.command, m.what, detail)
}

// compare lists the false findings of got and the misses of want.
func compare(want expectation, got []reported) []mismatch {
	var out []mismatch
	seen := map[finding]bool{}
	for _, r := range got {
		if seen[r.finding] {
			continue
		}
		seen[r.finding] = true
		if contains(want.want, r.finding) || contains(want.allowed, r.finding) {
			continue
		}
		what := falseWarning
		if r.action == deny {
			what = falseDenial
		}
		out = append(out, mismatch{what: what, finding: r.finding, line: r.line})
	}
	for _, f := range want.want {
		if !seen[f] {
			out = append(out, mismatch{what: miss, finding: f})
		}
	}
	return out
}

func contains(fs []finding, f finding) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}
