package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// Predictor runs the built `kubectl hygiene diff -f <manifest> -o json`
// against the live cluster before an apply, and requires kubectl apply to
// print exactly the predicted messages: warnings and denial, each
// predicted finding's rule, action and path included, diff's exit status 1
// exactly when the apply is denied. A prediction of no UPDATE (a creation,
// an unchanged object) must meet an apply that prints nothing of
// apply-hygiene's. It counts the comparisons; it is safe for parallel
// tests.
type Predictor struct {
	bin string
	// home is diff's $HOME: one discovery cache for every run.
	home string

	mu                        sync.Mutex
	applies, messages, silent int
}

// NewPredictor returns a Predictor with the package's kubectl-hygiene
// (HygieneBinary).
func NewPredictor(t *testing.T) *Predictor {
	t.Helper()
	return &Predictor{bin: HygieneBinary(t), home: t.TempDir()}
}

// HygieneBinary returns the kubectl-hygiene binary, built once for the
// package into a directory of its own in the framework's home (removed
// with the control plane): a directory to put on PATH for kubectl's
// plugin discovery.
func HygieneBinary(t *testing.T) string {
	t.Helper()
	requireEnv(t)
	shared.once.Do(func() {
		dir := filepath.Join(env.home, "bin")
		shared.path = filepath.Join(dir, "kubectl-hygiene")
		if shared.err = os.MkdirAll(dir, 0o755); shared.err != nil {
			return
		}
		bin, err := controlplane.ProjectBinary(t.Context(), "kubectl-hygiene", dir)
		if err != nil || bin == shared.path {
			shared.err = err
			return
		}
		// The prebuilt one, linked into the directory of its own.
		if err := os.Symlink(bin, shared.path); err != nil {
			shared.err = fmt.Errorf("linking the prebuilt kubectl-hygiene: %w", err)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.path
}

// shared is the kubectl-hygiene that HygieneBinary builds once.
var shared struct {
	once sync.Once
	path string
	err  error
}

// Summary says how many applies were predicted, and how many messages.
func (p *Predictor) Summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("kubectl hygiene diff predicted %d applies exactly (%d messages of apply-hygiene, %d applies without any)", p.applies, p.messages, p.silent)
}

// Messages is how many messages of apply-hygiene the predicted applies
// printed.
func (p *Predictor) Messages() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.messages
}

// Apply runs `kubectl apply -f file` as k after diff predicted it, checks
// the prediction and returns kubectl's result.
func (p *Predictor) Apply(t *testing.T, k Kubectl, file string) Result {
	t.Helper()
	check := p.Before(t, k, "apply -f "+file, file)
	res := k.Run(t, "apply", "-f", file)
	check(res)
	return res
}

// said is one message of apply-hygiene as kubectl prints it: a warning or
// (part of) the denial.
type said struct {
	Action, Message string
}

// diffFinding is one finding of `kubectl hygiene diff -o json`.
type diffFinding struct {
	Rule, Action, Path, Message string
}

// Before runs diff on the manifest file that `kubectl apply` as k is about
// to send and returns the check of kubectl's result; what names the apply
// in errors.
func (p *Predictor) Before(t *testing.T, k Kubectl, what, file string) func(Result) {
	t.Helper()
	check := p.Predict(t, k, what, file)
	return func(res Result) {
		t.Helper()
		for _, problem := range check(res) {
			t.Error(problem)
		}
	}
}

// Predict is Before for a harness that counts the failures itself: the
// check it returns gives each way the apply differed from the prediction
// instead of failing t.
func (p *Predictor) Predict(t *testing.T, k Kubectl, what, file string) func(Result) []string {
	t.Helper()
	return p.PredictBut(t, k, what, file, nil)
}

// PredictBut is Predict without the findings at the fields that another
// mutating webhook changes in the apply's own write (stamped, by path as
// the messages print it; nil for none): diff computes the apply on the
// client, as kubectl does, and what a webhook it does not know (a mesh
// injector re-stamping every write) does to the write is beyond it. Such
// a finding may be printed with another text, left out of the 4 KiB (the
// left-out line then counts it) or not made at all.
func (p *Predictor) PredictBut(t *testing.T, k Kubectl, what, file string, stamped func(path string) bool) func(Result) []string {
	t.Helper()
	findings, code := p.diff(t, k, file)
	return func(res Result) []string {
		problems, got := comparePrediction(what, findings, code, res.Stderr, stamped)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.applies++
		p.messages += got
		if got == 0 {
			p.silent++
		}
		return problems
	}
}

// comparePrediction gives each way kubectl's stderr differs from diff's
// findings and exit status (findings at stamped paths aside, see
// PredictBut), and how many messages of apply-hygiene kubectl printed.
func comparePrediction(what string, findings []diffFinding, code int, stderr string, stamped func(path string) bool) ([]string, int) {
	var unpredictable []diffFinding
	if stamped != nil {
		findings = slices.Clone(findings)
		findings = slices.DeleteFunc(findings, func(f diffFinding) bool {
			if f.Path != "" && stamped(f.Path) {
				unpredictable = append(unpredictable, f)
				return true
			}
			return false
		})
	}
	var problems []string
	want := predictedMessages(findings)
	printed := printedMessages(stderr)
	// The stamped findings diff predicted that kubectl did not print,
	// by rule: the left-out line may count them.
	mayBeLeftOut := map[string]int{}
	for _, s := range predictedMessages(unpredictable) {
		if s.Action == warn {
			mayBeLeftOut[ruleOf(s.Message)]++
		}
	}
	if stamped != nil {
		printed = slices.DeleteFunc(printed, func(s said) bool {
			if !stampedIn(s.Message, stamped) {
				return false
			}
			if rule := ruleOf(s.Message); s.Action == warn && mayBeLeftOut[rule] > 0 {
				mayBeLeftOut[rule]--
			}
			return true
		})
	}
	maps.DeleteFunc(mayBeLeftOut, func(_ string, n int) bool { return n == 0 })
	got, summary := withoutLeftOut(printed)
	if len(got) == 0 && summary == nil && slices.ContainsFunc(unpredictable, func(f diffFinding) bool { return f.Rule == "apply-reverts-drift" }) {
		// The apply's patch changes the stamped field, and the other
		// webhook stamps it back in the write: when that leaves
		// last-applied the write's only change, the webhooks take it
		// for a hand-over and print nothing (docs/cli.md, diff).
		return nil, 0
	}
	var leftOut map[string]bool
	if summary != nil {
		var problem string
		want, leftOut, problem = printedOf(want, got, summary, mayBeLeftOut)
		if problem != "" {
			problems = append(problems, fmt.Sprintf("%s: %s", what, problem))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		problems = append(problems, fmt.Sprintf("%s: kubectl hygiene diff predicted other messages than kubectl apply printed (-diff +apply):\n%s", what, diff))
	}
	for _, f := range findings {
		if f.Action == "dryrun" || leftOut[f.Message] {
			continue // recorded, never printed; or counted in the summary
		}
		named := slices.ContainsFunc(got, func(s said) bool {
			// A message about the whole object (missing-last-applied)
			// names no path; then the same message is enough.
			sameRule := s.Action == printedAs(f.Action) && strings.HasPrefix(s.Message, "["+f.Rule+"] ")
			return sameRule && (strings.Contains(s.Message, f.Path) || s.Message == f.Message)
		})
		if !named {
			problems = append(problems, fmt.Sprintf("%s: diff predicts %s [%s] %s; kubectl apply printed no such message", what, f.Action, f.Rule, f.Path))
		}
	}
	denied := slices.ContainsFunc(got, func(s said) bool { return s.Action == deny })
	if (code == 1) != denied {
		problems = append(problems, fmt.Sprintf("%s: diff exited %d, and kubectl apply was denied: %v", what, code, denied))
	}
	return problems, len(got)
}

// stampedIn reports whether a message names a field that stamped says
// another mutating webhook changes: its path follows the object's name
// and a colon.
func stampedIn(message string, stamped func(path string) bool) bool {
	_, rest, ok := strings.Cut(message, ": ")
	if !ok {
		return false
	}
	for _, word := range strings.Fields(rest) {
		if stamped(strings.TrimRight(word, ",")) {
			return true
		}
	}
	return false
}

// diff runs `kubectl hygiene diff -f file -o json` against the cluster as
// k's identity, in k's namespace, and returns its findings and exit
// status (0, or 1 when it predicts a denial).
func (p *Predictor) diff(t *testing.T, k Kubectl, file string) ([]diffFinding, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, "diff", "-f", file, "-o", "json", "--kubeconfig", k.Kubeconfig, "-n", k.Namespace)
	cmd.Env = append(os.Environ(), "HOME="+p.home, clientGC)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running kubectl hygiene diff: %v", err)
	}
	var doc struct {
		Findings []diffFinding `json:"findings"`
	}
	if code > 1 || json.Unmarshal(stdout.Bytes(), &doc) != nil {
		t.Fatalf("kubectl hygiene diff -f %s -o json: exit %d\n%s%s", file, code, stdout.String(), stderr.String())
	}
	t.Logf("$ kubectl hygiene diff -f %s -o json: exit %d, findings %+v", file, code, doc.Findings)
	return doc.Findings, code
}

// maxWarning is the length the webhook cuts each warning to: its default
// (webhook options.maxWarning, not configurable), which the chart keeps.
const maxWarning = 1024

// How kubectl shows a message of apply-hygiene.
const (
	warn = "warning"
	deny = "denial"
)

// printedAs is how kubectl shows a finding of action a: repairs and
// prunes are carried out by the mutating webhook and printed as warnings.
func printedAs(action string) string {
	if action == "deny" {
		return deny
	}
	return warn
}

// predictedMessages are the messages kubectl prints for diff's findings:
// one per decision (diff has one finding per path), dryrun ones never.
func predictedMessages(findings []diffFinding) []said {
	out := []said{}
	for _, f := range findings {
		if f.Action == "dryrun" {
			continue
		}
		s := said{printedAs(f.Action), f.Message}
		if s.Action == warn && len(s.Message) > maxWarning {
			s.Message = s.Message[:maxWarning-len("…")] + "…"
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	sortSaid(out)
	return out
}

// printedMessages are apply-hygiene's messages in kubectl's stderr: each
// "Warning: [rule] …" line, and each message of the denial (the webhook
// joins them with newlines after "denied the request: ").
func printedMessages(stderr string) []said {
	out := []said{}
	denial := ""
	if i := strings.Index(stderr, "denied the request: "); i >= 0 {
		stderr, denial = stderr[:i], stderr[i+len("denied the request: "):]
	}
	for _, line := range strings.Split(stderr, "\n") {
		if m, ok := strings.CutPrefix(line, "Warning: "); ok && strings.HasPrefix(m, "[") {
			out = append(out, said{warn, m})
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(denial), "\n") {
		switch {
		case strings.HasPrefix(line, "["):
			out = append(out, said{deny, line})
		case line != "" && len(out) > 0 && out[len(out)-1].Action == deny:
			out[len(out)-1].Message += "\n" + line
		}
	}
	sortSaid(out)
	return out
}

func sortSaid(s []said) {
	slices.SortFunc(s, func(a, b said) int {
		return strings.Compare(a.Action+"\x00"+a.Message, b.Action+"\x00"+b.Message)
	})
}

// withoutLeftOut removes the left-out summary from printed and returns
// its counts by rule (nil when there is none).
func withoutLeftOut(printed []said) ([]said, map[string]int) {
	out := []said{}
	var counts map[string]int
	for _, s := range printed {
		if c := LeftOutCounts(s.Message); s.Action == warn && c != nil {
			counts = c
			continue
		}
		out = append(out, s)
	}
	return out, counts
}

// printedOf splits the predicted warnings into those kubectl printed and
// those the summary counts (left out), and says how the summary's counts
// differ from the predicted warnings that are not printed; by rule, it
// may count up to mayBeLeftOut more (stamped findings, see PredictBut).
func printedOf(want, got []said, counts, mayBeLeftOut map[string]int) (printed []said, leftOut map[string]bool, problem string) {
	printed, leftOut = []said{}, map[string]bool{}
	missing := map[string]int{}
	for _, w := range want {
		if w.Action != warn || slices.Contains(got, w) {
			printed = append(printed, w)
			continue
		}
		leftOut[w.Message] = true
		missing[ruleOf(w.Message)]++
	}
	rules := map[string]bool{}
	for r := range missing {
		rules[r] = true
	}
	for r := range counts {
		rules[r] = true
	}
	for _, rule := range slices.Sorted(maps.Keys(rules)) {
		if more := counts[rule] - missing[rule]; more < 0 || more > mayBeLeftOut[rule] {
			problem = fmt.Sprintf("the warnings left out are %v by rule, and the summary counts %v", missing, counts)
			if len(mayBeLeftOut) > 0 {
				problem += fmt.Sprintf(" (with up to %v at stamped fields)", mayBeLeftOut)
			}
			break
		}
	}
	return printed, leftOut, problem
}

// ruleOf is a message's rule, "other" without one (as the summary counts
// it).
func ruleOf(message string) string {
	if m := ruleOfMessage.FindStringSubmatch(message); m != nil {
		return m[1]
	}
	return "other"
}

// ruleOfMessage finds a message's [rule].
var ruleOfMessage = regexp.MustCompile(`^\[([a-z-]+)\]`)

// ApplyPredicted runs `kubectl apply -f file` as k after `kubectl hygiene
// diff` predicted it, and requires the prediction to be exactly what
// kubectl printed (Predictor.Apply).
func ApplyPredicted(t *testing.T, k Kubectl, file string) Result {
	t.Helper()
	return NewPredictor(t).Apply(t, k, file)
}
