package generative_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Budgets: GENERATIVE_STEPS steps in sequences of sequenceLength, from
// GENERATIVE_SEED (a new one each run when unset).
const (
	defaultSteps   = 500
	sequenceLength = 25
	// replayBudget bounds the replays of one minimisation, and
	// minimiseFor its wall time.
	replayBudget = 10
	minimiseFor  = 45 * time.Second
)

// TestGenerative runs random sequences of writes over the corpus objects
// in parallel namespaces, judges every step against the truth model,
// minimises what fails, and prints the summary line.
func TestGenerative(t *testing.T) {
	framework.ControlPlane(t)
	seed, steps := budget(t)
	from := firstSequence(t)
	objects, err := loadPicks()
	if err != nil {
		t.Fatal(err)
	}
	f := framework.New(t)
	ensureNamespace(t, f, flux.namespaceOf())
	startMesh(t, f)
	errorsBefore := metricErrors(t, f)
	p := framework.NewPredictor(t)
	fmt.Printf("generative: seed %d, %d steps from sequence %d (replay with GENERATIVE_SEED=%d GENERATIVE_STEPS=%d GENERATIVE_FROM=%d)\n", seed, steps, from, seed, steps, from)
	var lg ledger
	lg.start = time.Now()
	t.Run("sequence", func(t *testing.T) {
		// Sequences wait mostly on the API server and kubectl: run more
		// of them at once than go test's -parallel (the cores) would.
		next := make(chan int)
		var wg sync.WaitGroup
		for range parallel(t) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					o := objects[i%len(objects)]
					n := min(sequenceLength, steps-(i-from)*sequenceLength)
					name := fmt.Sprintf("%03d-%s-%s", i, o.kind, o.name)
					t.Run(name, func(t *testing.T) {
						runSequence(t, &lg, p, name, o, seed+uint64(i)*1_000_003, n, scopeOf(i))
						framework.AppendReport(t, "generative-progress.txt", fmt.Sprintf("seed %d %s", seed, lg.sequenceLine(name)))
					})
				}
			}()
		}
		for i := from; (i-from)*sequenceLength < steps; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
	})
	lg.metricErrors = metricErrors(t, f) - errorsBefore
	lg.addWrites(map[string]int{"periodic audit conflicts": auditConflicts(framework.WebhookMetrics(t))})
	summary := lg.summary()
	fmt.Println(summary)
	fmt.Println(selfWriteSummary(lg.wrote))
	fmt.Printf("generative: %s; %s for the steps, %s with the minimisations\n", p.Summary(), lg.stepsTook.Round(time.Second), time.Since(lg.start).Round(time.Second))
	framework.WriteReport(t, "generative.txt", summary)
	if len(lg.failures) > 0 || lg.metricErrors > 0 {
		t.Errorf("%s\n%s", summary, lg.report())
	}
}

// budget reads GENERATIVE_SEED and GENERATIVE_STEPS.
func budget(t *testing.T) (seed uint64, steps int) {
	seed = uint64(time.Now().UnixNano() % 1_000_000)
	if s := os.Getenv("GENERATIVE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("GENERATIVE_SEED=%q: %v", s, err)
		}
		seed = v
	}
	steps = defaultSteps
	if s := os.Getenv("GENERATIVE_STEPS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("GENERATIVE_STEPS=%q: want a positive number", s)
		}
		steps = v
	}
	return seed, steps
}

// firstSequence is the index of the first sequence to run:
// GENERATIVE_FROM, 0 by default. A sequence's steps depend only on the
// seed and its index, so a long run stopped after sequence k goes on
// with GENERATIVE_FROM=k+1 (make soak prints its progress per sequence).
func firstSequence(t *testing.T) int {
	if s := os.Getenv("GENERATIVE_FROM"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			t.Fatalf("GENERATIVE_FROM=%q: want a sequence index", s)
		}
		return v
	}
	return 0
}

// parallel is how many sequences run at once: GENERATIVE_PARALLEL, 4 by
// default.
func parallel(t *testing.T) int {
	n := 4
	if s := os.Getenv("GENERATIVE_PARALLEL"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("GENERATIVE_PARALLEL=%q: want a positive number", s)
		}
		n = v
	}
	return n
}

// runSequence generates and runs one sequence of n steps on o in a
// namespace of scope, records it in lg and minimises the failures no other
// sequence minimised.
func runSequence(t *testing.T, lg *ledger, p *framework.Predictor, name string, o object, seed uint64, n int, scope string) {
	if carriesFixLabel(scope) {
		o = o.withFixLabel()
	}
	g := newGen(seed, o)
	g.exemptUndo = scope == scopeFix
	r := newRunner(t, o, p)
	r.label(scope)
	var steps []step
	finished := false
	defer func() {
		if !finished {
			// The harness gave up (t.Fatal): the steps run still count.
			lg.add(name, steps, r.failures)
		}
	}()
	for i := 0; i < n; i++ {
		s := g.step()
		steps = append(steps, s)
		g.observe(s, r.run(i, s))
		g.exists, g.deleting = r.state()
		g.offer = r.offer
		// kubectl apply --server-side under another manager than kubectl
		// drops last-applied too (its migration): the object tells.
		g.lastApplied = lastApplied(r.last) != nil
	}
	r.judgeAuditEvents(n - 1)
	finished = true
	lg.finished()
	lg.addWrites(r.wrote)
	for _, sig := range lg.add(name, steps, r.failures) {
		lg.script(sig, minimised(t, p, o, steps, r.failures, sig, scope))
	}
}

// minimised is the shortest sequence found that still fails with sig,
// as a script.
func minimised(t *testing.T, p *framework.Predictor, o object, steps []step, failures []failure, sig, scope string) string {
	last := 0
	for _, f := range failures {
		if f.signature() == sig {
			last = f.step
			break
		}
	}
	deadline := time.Now().Add(minimiseFor)
	stillFails := func(candidate []step) bool {
		if time.Now().After(deadline) {
			return false
		}
		found := false
		t.Run("minimise", func(t *testing.T) {
			r := newRunner(t, o, p)
			r.label(scope)
			r.stop = func(f failure) bool { return f.signature() == sig }
			for i, s := range candidate {
				if time.Now().After(deadline) {
					return
				}
				r.run(i, s)
				if r.stopped() {
					found = true
					return
				}
			}
		})
		return found
	}
	shortest := minimise(steps[:last+1], stillFails, replayBudget)
	header := ""
	if carriesFixLabel(scope) {
		header = fmt.Sprintf("# the server's periodic audit: --audit-fix --audit-interval=%s --object-selector='%s', policy.rules.orphaned-field.auditFix=true, policy.exemptions.users={bob}\n", auditInterval, fixSelector)
	}
	if l := scopeLabels[scope]; l != "" {
		header += fmt.Sprintf("kubectl label namespace %s %s\n", scriptNamespace, l)
	}
	return header + script(shortest)
}

// ensureNamespace creates the namespace name unless it exists.
func ensureNamespace(t *testing.T, f *framework.Framework, name string) {
	_, err := f.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// metricErrors is the API server's count of apply-hygiene's webhook calls
// that failed or failed open, or that answered an error
// (apiserver_admission_webhook_rejection_count other than a denial with
// 403, and apiserver_admission_webhook_fail_open_count).
func metricErrors(t *testing.T, f *framework.Framework) int {
	const rejections, failOpen = "apiserver_admission_webhook_rejection_count", "apiserver_admission_webhook_fail_open_count"
	samples := framework.ParseSamples(t, f.APIServerMetrics(t), rejections, failOpen)
	ours := func(series string) bool {
		return strings.HasSuffix(framework.Label(series, "name"), ".apply-hygiene.io")
	}
	errored := func(series string) bool {
		denied := framework.Label(series, "error_type") == "no_error" && framework.Label(series, "rejection_code") == "403"
		return ours(series) && !denied
	}
	return int(samples.Sum(rejections, errored) + samples.Sum(failOpen, ours))
}
