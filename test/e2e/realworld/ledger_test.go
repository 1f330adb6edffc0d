package realworld_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// ledger collects the steps and mismatches of every subtest; they run in
// parallel.
type ledger struct {
	mu sync.Mutex
	// objects holds each object whose day ran, by id.
	objects    map[string]workload
	steps      int
	mismatches []mismatch
	others     map[string]int
}

// started counts an object whose day runs.
func (l *ledger) started(w workload) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.objects == nil {
		l.objects = map[string]workload{}
	}
	l.objects[w.id()] = w
}

// record adds one step and its mismatches.
func (l *ledger) record(ms []mismatch, others []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps++
	l.mismatches = append(l.mismatches, ms...)
	if l.others == nil {
		l.others = map[string]int{}
	}
	for _, o := range others {
		l.others[objectName.ReplaceAllString(o, "resource <object> was")]++
	}
}

// count returns how many mismatches are of the kind what.
func (l *ledger) count(what string) int {
	n := 0
	for _, m := range l.mismatches {
		if m.What == what {
			n++
		}
	}
	return n
}

// summary is the line the test always prints, with the objects of other
// kinds than the workloads counted by kind.
func (l *ledger) summary() string {
	projects := map[string]bool{}
	others := map[string]int{}
	workloads := 0
	for _, w := range l.objects {
		projects[w.project] = true
		if w.isWorkload() {
			workloads++
		} else {
			others[w.kind]++
		}
	}
	return fmt.Sprintf("realworld: %d objects (%d workloads, %d others: %s) from %d projects, %d steps, %d false warnings, %d false denials, %d misses",
		len(l.objects), workloads, len(l.objects)-workloads, kindCounts(others), len(projects), l.steps,
		l.count(falseWarning), l.count(falseDenial), l.count(miss))
}

// report fails t once per mismatch, then logs them grouped by kind, rule
// and path pattern, and the other warnings kubectl printed.
func (l *ledger) report(t *testing.T) {
	t.Helper()
	for _, m := range l.mismatches {
		t.Errorf("%s", m)
	}
	if len(l.mismatches) > 0 {
		t.Logf("mismatches by kind, rule and path:\n%s", groups(l.mismatches))
	}
	for _, line := range sortedCounts(l.others) {
		t.Logf("other kubectl warning: %s", line)
	}
}

// objectName finds the object that kubectl's own warnings name, so that
// they group.
var objectName = regexp.MustCompile(`resource \S+ was`)

// namePattern hides the names of list elements in a path, so findings on
// the containers of different workloads group together.
var namePattern = regexp.MustCompile(`\[name=[^\]]*\]`)

// groups renders "count  kind  finding" lines, most frequent first.
func groups(ms []mismatch) string {
	counts := map[string]int{}
	for _, m := range ms {
		p := namePattern.ReplaceAllString(m.Finding.Path, "[name=*]")
		counts[fmt.Sprintf("%-13s [%s] %s", m.What, m.Finding.Rule, p)]++
	}
	return strings.Join(sortedCounts(counts), "\n")
}

// sortedCounts renders "count  key" lines, most frequent first.
func sortedCounts(counts map[string]int) []string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%4d  %s", counts[k], k)
	}
	return out
}
