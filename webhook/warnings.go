package webhook

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// The API server passes on at most 4 KiB (runes) of warnings for one
// request, from every webhook together; past it, it cuts every warning to
// 256 runes, the remedy commands with them, and drops the rest
// (truncateAtTotalRunes in k8s.io/apiserver/pkg/endpoints/filters/warning.go).
// Each webhook keeps to its share, and the shares leave room for the
// warnings of others in the same write (Pod Security admission's "would
// violate PodSecurity", deprecated APIs, other webhooks), so what kubectl
// prints is whole.
const (
	mutatingWarningRunes   = 768
	validatingWarningRunes = 2304
	// othersWarningRunes is what the shares leave of the 4 KiB.
	othersWarningRunes = 4096 - mutatingWarningRunes - validatingWarningRunes
)

// FitWarnings returns warnings as the API server will pass them on within
// budget runes: the first ones whole, and, when the rest do not fit, one
// warning in their place that counts them by rule and names the command
// that shows them all for target (the object as kubectl arguments,
// "resource.group/name -n namespace"). kubectl hygiene diff and explain
// print every finding whole.
func FitWarnings(warnings []string, budget int, target string) []string {
	total := 0
	for _, w := range warnings {
		total += utf8.RuneCountInString(w)
	}
	if total <= budget {
		return warnings
	}
	for kept := len(warnings) - 1; kept >= 0; kept-- {
		summary := leftOut(warnings[kept:], target)
		used := utf8.RuneCountInString(summary)
		for _, w := range warnings[:kept] {
			used += utf8.RuneCountInString(w)
		}
		if used <= budget || kept == 0 {
			return append(append([]string(nil), warnings[:kept]...), summary)
		}
	}
	return nil // unreachable: kept == 0 returns
}

// ruleOf finds a message's [rule].
var ruleOf = regexp.MustCompile(`^\[([a-z-]+)\]`)

// leftOut is the warning that stands for the warnings left out.
func leftOut(rest []string, target string) string {
	var rules []string
	count := map[string]int{}
	for _, w := range rest {
		rule := "other"
		if m := ruleOf.FindStringSubmatch(w); m != nil {
			rule = m[1]
		}
		if count[rule] == 0 {
			rules = append(rules, rule)
		}
		count[rule]++
	}
	parts := make([]string, 0, len(rules))
	for _, r := range rules {
		parts = append(parts, fmt.Sprintf("%d %s", count[r], r))
	}
	return fmt.Sprintf("[apply-hygiene] %d more warnings (%s) left out: the API server passes on at most 4 KiB of warnings for a write. See every finding with: kubectl hygiene explain %s",
		len(rest), strings.Join(parts, ", "), target)
}

// cutWarning returns d's message as a warning of at most max bytes, cut at
// a character's boundary. A longer message is cut before the command it
// shows (d.Command) and its "with: ", which stay whole: a command cut in
// the middle is another command. When the command alone does not fit, the
// warning leaves it out and says that kubectl hygiene explain prints it
// for target (the object as kubectl arguments).
func cutWarning(d policy.Decision, max int, target string) string {
	s := d.Message
	if len(s) <= max {
		return s
	}
	if i := strings.LastIndex(s, d.Command); d.Command != "" && i >= 0 {
		head, tail := s[:i], s[i:]
		if strings.HasSuffix(head, "with: ") {
			head, tail = strings.TrimSuffix(head, "with: "), "with: "+tail
		}
		if room := max - len("… ") - len(tail); room > 0 {
			return strings.TrimRight(cutAt(head, room), " ") + "… " + tail
		}
		tooLong := "… (the command is too long for a warning: kubectl hygiene explain " + target + " prints it)"
		if room := max - len(tooLong); room > 0 {
			return strings.TrimRight(cutAt(head, room), " ") + tooLong
		}
	}
	return cutAt(s, max-len("…")) + "…"
}

// cutAt is s cut to at most n bytes at a character's boundary.
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// requestTarget is the object of a request as kubectl arguments, as the
// policies' messages write it (lib.target): RESOURCE.GROUP/NAME from the
// request's resource (a Scale's warnings are about its workload, whose
// resource the request names), one shell word, then -n and the namespace.
func requestTarget(req *admission.Request) string {
	resource := req.Resource.Resource
	if req.Resource.Group != "" {
		resource += "." + req.Resource.Group
	}
	target := shellWord(resource + "/" + req.Name)
	if req.Namespace == "" {
		return target
	}
	return target + " -n " + shellWord(req.Namespace)
}

// plainWord matches a word the shell reads as it is (lib.shell_word).
var plainWord = regexp.MustCompile(`^[A-Za-z0-9._/:-]+$`)

// shellWord is s as one shell word, as the policies' lib.shell_word
// writes it: as is when it is made of letters, digits and . _ / : - alone,
// else in single quotes, a quote in it closed, escaped and reopened.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
