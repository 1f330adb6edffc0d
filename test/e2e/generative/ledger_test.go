package generative_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// ledger collects the steps, writers and failures of every sequence; they
// run in parallel.
type ledger struct {
	mu       sync.Mutex
	steps    int
	writers  map[string]bool
	failures []sequenceFailure
	// scripts are the minimised scripts, by failure signature, and
	// checks the checks they are for.
	scripts map[string]string
	checks  map[string]bool
	// metricErrors are the webhook errors the API server's metrics
	// counted; the same errors kubectl showed are among them, so the
	// summary counts the larger of the two.
	metricErrors int
	// start is when the sequences started, and stepsTook how long until
	// the last one finished its steps (before minimising).
	start     time.Time
	stepsTook time.Duration
	// wrote counts apply-hygiene's own writes (selfWriteSummary).
	wrote map[string]int
}

// addWrites adds a sequence's counts of apply-hygiene's own writes.
func (l *ledger) addWrites(wrote map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wrote == nil {
		l.wrote = map[string]int{}
	}
	for k, n := range wrote {
		l.wrote[k] += n
	}
}

// finished notes that a sequence finished its steps.
func (l *ledger) finished() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stepsTook = max(l.stepsTook, time.Since(l.start))
}

// sequenceFailure is a failure of one sequence.
type sequenceFailure struct {
	sequence string
	step     step
	failure
}

// add records a sequence's steps and failures; it reports the signatures
// of its failures of checks that no sequence minimised yet, and claims
// them.
func (l *ledger) add(sequence string, steps []step, failures []failure) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps += len(steps)
	if l.writers == nil {
		l.writers, l.scripts, l.checks = map[string]bool{}, map[string]string{}, map[string]bool{}
	}
	for _, s := range steps {
		l.writers[s.Writer] = true
	}
	var fresh []string
	for _, f := range failures {
		l.failures = append(l.failures, sequenceFailure{sequence, steps[f.step], f})
		// One script per check: the run's budget goes to distinct bugs.
		if !l.checks[f.check] && len(l.scripts) < maxMinimised {
			l.checks[f.check] = true
			l.scripts[f.signature()] = ""
			fresh = append(fresh, f.signature())
		}
	}
	return fresh
}

// maxMinimised bounds how many distinct failures a run minimises.
const maxMinimised = 4

// script records the minimised script of a failure signature.
func (l *ledger) script(signature, s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scripts[signature] = s
}

func (l *ledger) count(counted string) int {
	n := 0
	for _, f := range l.failures {
		if f.counted == counted {
			n++
		}
	}
	return n
}

// summary is the line the test always prints.
func (l *ledger) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("generative: %d steps, %d writers, %d false warnings, %d false denials, %d misses, %d webhook errors, %d wrong self-writes",
		l.steps, len(l.writers), l.count(falseWarning), l.count(falseDenial), l.count(miss), max(l.count(webhookError), l.metricErrors), l.count(wrongSelfWrite))
}

// sequenceLine is one sequence's counts, for the progress report.
func (l *ledger) sequenceLine(sequence string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	counts := map[string]int{}
	for _, f := range l.failures {
		if f.sequence == sequence {
			counts[f.counted]++
		}
	}
	return fmt.Sprintf("%s: %d false warnings, %d false denials, %d misses, %d webhook errors, %d wrong self-writes",
		sequence, counts[falseWarning], counts[falseDenial], counts[miss], counts[webhookError], counts[wrongSelfWrite])
}

// report renders every failure grouped by check, then the minimised
// scripts.
func (l *ledger) report() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	groups := map[string]int{}
	for _, f := range l.failures {
		groups[fmt.Sprintf("%-13s %-26s %s", f.counted, f.check, f.step.Writer)]++
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("failed checks by count, check and writer:\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%4d  %s\n", groups[k], k)
	}
	for _, f := range l.failures {
		fmt.Fprintf(&b, "%s step %d (%s, as %s): %s: %s\n", f.sequence, f.failure.step+1, f.step.Writer, f.step.As, f.check, f.detail)
	}
	sigs := make([]string, 0, len(l.scripts))
	for sig := range l.scripts {
		sigs = append(sigs, sig)
	}
	sort.Strings(sigs)
	for _, sig := range sigs {
		fmt.Fprintf(&b, "\n=== minimised: %s\n%s", sig, l.scripts[sig])
	}
	return b.String()
}
