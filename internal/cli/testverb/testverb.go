package testverb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/junit"
	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Options holds the flags and inputs of `kubectl hygiene test`.
type Options struct {
	// Paths are directories (searched for *_test.yaml files) and files.
	Paths []string
	// Verbose prints every case, not only the failures.
	Verbose bool
	// Output is "" (text) or "junit" (a JUnit XML report).
	Output string

	files    []string
	analyzer func() *merge.Analyzer
	genericiooptions.IOStreams
}

var _ cli.Verb = (*Options)(nil)

// NewCmd returns `kubectl hygiene test`, which analyzes with analyzer.
func NewCmd(streams genericiooptions.IOStreams, analyzer func() *merge.Analyzer) *cobra.Command {
	o := &Options{IOStreams: streams, analyzer: analyzer}
	cmd := &cobra.Command{
		Use:   "test DIR|FILE...",
		Short: "Check that policies decide recorded admission requests as expected, offline",
		Long: `Run the test cases of every *_test.yaml file under each DIR (or each FILE)
through apply-hygiene's own review path, with the bundled rules and the
user policies and configuration each file names, without a cluster. A case
is an AdmissionReview (inline or a file), the labels of its namespace, the
objects the webhook would read (a /scale request's parent, the revisions of
a rollout undo), and the decisions expected: the repair and prune decisions
of the mutating pass and the deny, warn and dryrun decisions of the
validating pass, which sees the object as the mutating pass left it.

The exit status is 1 when any case gets other decisions (each shown as a
(-want +got) diff), 2 when a file cannot be read. -o junit prints a JUnit XML
report instead (a testsuite per file, a testcase per case, the diff in each
failure) for CI systems; the exit status is the same.`,
		Example: `  kubectl hygiene test docs/examples/
  kubectl hygiene test -v policies/no-edit-in-prod_test.yaml
  kubectl hygiene test policies/ -o junit > report.xml`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.BadInput(errors.New("test needs at least one DIR or FILE"))
			}
			return nil
		},
		RunE: cli.RunE(o),
	}
	cmd.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "print every case, not only the failures")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: junit (a JUnit XML report), or empty for text")
	return cmd
}

// Complete records the paths; it reads nothing.
func (o *Options) Complete(_ *cobra.Command, args []string) error {
	o.Paths = args
	return nil
}

// Validate finds the test files.
func (o *Options) Validate() error {
	if o.Output != "" && o.Output != "junit" {
		return cli.BadInput(fmt.Errorf(`--output must be "junit" (or empty for text), not %q`, o.Output))
	}
	o.files = nil
	for _, p := range o.Paths {
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path == p && !d.IsDir() || !d.IsDir() && isTestFile(d.Name()) {
				o.files = append(o.files, path)
			}
			return nil
		})
		if err != nil {
			return cli.BadInput(fmt.Errorf("reading %s: %w", p, err))
		}
	}
	if len(o.files) == 0 {
		return cli.BadInput(fmt.Errorf("no *_test.yaml files in %s", strings.Join(o.Paths, ", ")))
	}
	return nil
}

func isTestFile(name string) bool {
	return strings.HasSuffix(name, "_test.yaml") || strings.HasSuffix(name, "_test.yml")
}

// Run runs every case and prints the failures and a summary.
func (o *Options) Run(ctx context.Context) error {
	r := &testRunner{analyzer: o.analyzer(), engines: map[string]*policy.Engine{}}
	passed, failed := 0, 0
	var results []junit.Result
	for _, path := range o.files {
		f, err := loadTestFile(path)
		if err != nil {
			return err
		}
		for _, c := range f.Cases {
			start := time.Now()
			diff, err := r.run(ctx, f.specFor(c, filepath.Dir(path)), c, filepath.Dir(path))
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			results = append(results, junit.Result{File: path, Name: c.Name, Diff: diff, Time: time.Since(start)})
			if o.Output == "junit" {
				if diff != "" {
					failed++
				} else {
					passed++
				}
				continue
			}
			if diff != "" {
				failed++
				fmt.Fprintf(o.Out, "FAIL %s: %s\n    decisions mismatch (-want +got):\n%s\n", path, c.Name, indentLines(diff, "    "))
				continue
			}
			passed++
			if o.Verbose {
				fmt.Fprintf(o.Out, "PASS %s: %s\n", path, c.Name)
			}
		}
	}
	if o.Output == "junit" {
		if err := junit.Write(o.Out, results); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(o.Out, "%d passed, %d failed\n", passed, failed)
	}
	if failed > 0 {
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("%d of %d test cases failed", failed, passed+failed)}
	}
	return nil
}

func indentLines(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// testRunner runs cases, building each policy set once.
type testRunner struct {
	analyzer *merge.Analyzer
	engines  map[string]*policy.Engine
}

// run reviews the case's request as the API server calls the webhooks,
// mutating first, and returns the diff of the decisions ("" when they are
// as expected).
func (r *testRunner) run(ctx context.Context, spec engineSpec, c testCase, dir string) (string, error) {
	engine, ok := r.engines[spec.key()]
	if !ok {
		var err error
		if engine, err = spec.newEngine(ctx); err != nil {
			return "", err
		}
		r.engines[spec.key()] = engine
	}
	req, err := c.readReview(dir)
	if err != nil {
		return "", err
	}
	cluster, err := c.cluster(dir)
	if err != nil {
		return "", err
	}
	got, err := r.review(ctx, engine, cluster, req)
	if err != nil {
		return "", fmt.Errorf("case %q: %w", c.Name, err)
	}
	return decisionsDiff(c.Expect, got), nil
}

// review runs the request through the review core (internal/review) as the
// API server calls the webhooks (review.Reviewer.AdmitRequest) and returns
// the decisions admission acts on.
func (r *testRunner) review(ctx context.Context, engine *policy.Engine, cluster review.Cluster, req *admissionv1.AdmissionRequest) ([]policy.Decision, error) {
	a, err := review.NewReviewer(r.analyzer, engine, cluster).AdmitRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	return a.Decisions(), nil
}

// decisionsDiff compares the expected decisions with got. Each decision
// that meets an unused expectation of its rule and action (the message
// equal, or containing MessageContains, when they are set) is shown as
// that expectation; any other is shown in full.
func decisionsDiff(want []expectedDecision, got []policy.Decision) string {
	used := make([]bool, len(want))
	views := make([]expectedDecision, 0, len(got))
	for _, d := range got {
		view := expectedDecision{Rule: d.Rule, Action: d.Action, Message: d.Message}
		for i, w := range want {
			if !used[i] && meets(d, w) {
				used[i], view = true, w
				break
			}
		}
		views = append(views, view)
	}
	want = slices.Clone(want)
	if want == nil {
		want = []expectedDecision{}
	}
	sortExpected(want)
	sortExpected(views)
	return gocmp.Diff(want, views)
}

func meets(d policy.Decision, w expectedDecision) bool {
	return d.Rule == w.Rule && d.Action == w.Action &&
		(w.Message == "" || d.Message == w.Message) && strings.Contains(d.Message, w.MessageContains)
}

func sortExpected(ds []expectedDecision) {
	slices.SortStableFunc(ds, func(a, b expectedDecision) int {
		return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Action, b.Action),
			cmp.Compare(a.Message, b.Message), cmp.Compare(a.MessageContains, b.MessageContains))
	})
}
