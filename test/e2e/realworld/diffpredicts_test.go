package realworld_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// predictor runs the built `kubectl hygiene diff -f <manifest> -o json`
// against the live cluster before every apply of the corpus's day
// (TestRealWorld), and requires kubectl apply to print exactly the
// predicted messages: warnings and denial, each predicted finding's rule,
// action and path included, diff's exit status 1 exactly when the apply is
// denied. A prediction of no UPDATE (a creation, an unchanged object) must
// meet an apply that prints nothing of apply-hygiene's. It counts the
// comparisons.
type predictor struct {
	bin string
	// home is diff's $HOME: one discovery cache for every run.
	home string

	mu                        sync.Mutex
	applies, messages, silent int
}

// summary is the count line of the predictions.
func (p *predictor) summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("realworld: kubectl hygiene diff predicted %d applies exactly (%d messages of apply-hygiene, %d applies without any)", p.applies, p.messages, p.silent)
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

// before runs diff on the manifest the apply is about to send and returns
// the comparison with kubectl's result.
func (p *predictor) before(l *life, step string, manifest []byte) func(framework.Result) {
	t := l.t
	t.Helper()
	file := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	findings, code := p.diff(t, l.f.Kubectl, file)
	return func(res framework.Result) {
		t.Helper()
		want := predictedMessages(findings)
		got := printedMessages(res.Stderr)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: step %q: kubectl hygiene diff predicted other messages than kubectl apply printed (-diff +apply):\n%s", l.w.id(), step, diff)
		}
		for _, f := range findings {
			if f.Action == "dryrun" {
				continue // recorded, never printed
			}
			named := slices.ContainsFunc(got, func(s said) bool {
				return s.Action == printedAs(f.Action) && strings.HasPrefix(s.Message, "["+f.Rule+"] ") && strings.Contains(s.Message, f.Path)
			})
			if !named {
				t.Errorf("%s: step %q: diff predicts %s [%s] %s; kubectl apply printed no such message", l.w.id(), step, f.Action, f.Rule, f.Path)
			}
		}
		denied := slices.ContainsFunc(got, func(s said) bool { return s.Action == deny })
		if (code == 1) != denied {
			t.Errorf("%s: step %q: diff exited %d, and kubectl apply was denied: %v", l.w.id(), step, code, denied)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.applies++
		p.messages += len(got)
		if len(got) == 0 {
			p.silent++
		}
	}
}

// diff runs `kubectl hygiene diff -f file -o json` against the cluster as
// k's identity, in k's namespace, and returns its findings and exit
// status (0, or 1 when it predicts a denial).
func (p *predictor) diff(t *testing.T, k framework.Kubectl, file string) ([]diffFinding, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, "diff", "-f", file, "-o", "json", "--kubeconfig", k.Kubeconfig, "-n", k.Namespace)
	cmd.Env = append(os.Environ(), "HOME="+p.home)
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
