package events

import (
	"strings"
	"unicode/utf8"
)

// MaxNote is the longest note the events API accepts, in bytes.
const MaxNote = 1024

// Reason turns a rule ID into an event reason in CamelCase:
// "imperative-edit" becomes "ImperativeEdit".
func Reason(rule string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(rule, "-") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]))
		b.WriteString(part[1:])
	}
	return b.String()
}

// Truncate cuts s to at most n bytes of valid UTF-8, ending with "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
