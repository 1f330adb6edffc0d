package webhook

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
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
// "kind/name -n namespace"). kubectl hygiene diff and explain print every
// finding whole.
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

// requestTarget is the object of a request as kubectl arguments, as the
// policies' messages write it (lib.target).
func requestTarget(req *admission.Request) string {
	kind := strings.ToLower(req.Kind.Kind)
	if req.SubResource != "" {
		kind = req.Resource.Resource // a Scale's warnings are about its workload
	}
	if req.Namespace == "" {
		return fmt.Sprintf("%s/%s", kind, req.Name)
	}
	return fmt.Sprintf("%s/%s -n %s", kind, req.Name, req.Namespace)
}
