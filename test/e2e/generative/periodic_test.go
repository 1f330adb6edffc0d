package generative_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// The server's periodic audit with --audit-fix is the writer that is no
// step: it runs every auditInterval over the cluster's workloads and,
// with orphaned-field's auditFix on (TestMain), removes the orphans of
// the objects it may fix and repairs a stale last-applied. It may fix
// only objects labelled fixLabel (the server's --object-selector, which
// the webhooks do not have: they review every object): the objects of
// the sequences whose scope is scopeFix, warn, ignore or dryrun. In the
// other sequences it writes nothing, so their orphans stay for the
// webhook's checks. Those labelled sequences run in step with the audit
// (awaitAudit), so that its writes land between steps, where betweenSteps
// judges them from the sequence.

// auditInterval is the server's --audit-interval.
const auditInterval = 20 * time.Second

// fixLabel is the label (key=value) of the objects the periodic audit
// may fix, and fixSelector the server's --object-selector for it.
const (
	fixLabelKey   = "gen.example.com/audit-fix"
	fixLabelValue = "on"
	fixSelector   = `{"matchLabels":{"` + fixLabelKey + `":"` + fixLabelValue + `"}}`
)

// auditScheduleLease is the Lease in which the server records each scan
// of the periodic audit (docs/audit.md).
const auditScheduleLease = "apply-hygiene-audit-schedule"

// carriesFixLabel reports whether the objects of a sequence of scope
// carry fixLabel: where the audit may fix them (scopeFix; warn, whose
// orphaned-field action is warn as elsewhere, with its auditFix) and where
// only the namespace's label keeps the audit away (ignore, dryrun).
func carriesFixLabel(scope string) bool { return scope != "" }

// withFixLabel is o with fixLabel in its manifest's labels.
func (o object) withFixLabel() object {
	o.manifest = runtime.DeepCopyJSON(o.manifest)
	framework.EnsureMap(o.manifest, "metadata", "labels")[fixLabelKey] = fixLabelValue
	return o
}

// fixable reports whether the periodic audit may fix the runner's object:
// it carries fixLabel and its namespace is neither ignored nor dryrun.
func (r *runner) fixable() bool { return carriesFixLabel(r.scope) && r.writes() }

// awaitAudit holds the next step of a sequence whose object carries
// fixLabel while a scan of the periodic audit is due before the step
// would end (the sequence's longest step so far, and at least 5 s) or is
// running, until the scan is recorded in the schedule Lease (after its
// fixes): the audit's writes then land between the steps. A scan that
// ran during the previous step anyway is counted and logged: a step's
// judgement may then have seen the audit's write as the step's.
func (r *runner) awaitAudit(i int) {
	if !carriesFixLabel(r.scope) {
		return
	}
	window := min(max(r.longest+2*time.Second, 5*time.Second), 10*time.Second)
	deadline := time.Now().Add(3 * auditInterval)
	started, finished := r.lastScan()
	for !started.IsZero() && time.Until(started.Add(auditInterval)) < window && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		started, finished = r.lastScan()
	}
	if r.awaitScan {
		r.afterExemptUndo(deadline)
		started, finished = r.lastScan()
	}
	if !r.stepStart.IsZero() && started.Before(r.stepEnd) && finished.After(r.stepStart) {
		r.wrote["steps a scan overlapped"]++
		r.t.Logf("the periodic audit's scan of %s–%s ran during step %d", started.Format(time.StampMilli), finished.Format(time.StampMilli), i)
	}
}

// afterExemptUndo waits until a scan that started after bob's undo is
// recorded (or until deadline), so that the audit's repair of the
// last-applied he left stale lands before the next step, and logs what
// kubectl hygiene audit --fix=dry-run makes of the object then (a
// person's view: the same findings, each fix or the reason for none).
func (r *runner) afterExemptUndo(deadline time.Time) {
	r.awaitScan = false
	for started, _ := r.lastScan(); !started.After(r.stepEnd) && time.Now().Before(deadline); started, _ = r.lastScan() {
		time.Sleep(250 * time.Millisecond)
	}
	res := r.f.Hygiene(r.t, "audit", "--fix=dry-run", "-n", r.f.Namespace)
	r.t.Logf("after bob's undo and the next scan, kubectl hygiene audit --fix=dry-run: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
}

// lastScan is when the last recorded scan of the periodic audit started
// and finished; zero when none is recorded yet.
func (r *runner) lastScan() (started, finished time.Time) {
	l, err := r.f.Client.CoordinationV1().Leases(devenv.Namespace).Get(context.Background(), auditScheduleLease, metav1.GetOptions{})
	if err != nil {
		return time.Time{}, time.Time{}
	}
	if l.Spec.AcquireTime != nil {
		started = l.Spec.AcquireTime.Time
	}
	if l.Spec.RenewTime != nil {
		finished = l.Spec.RenewTime.Time
	}
	return started, finished
}

// exempted is s, except that half of the undos of a sequence with
// exemptUndo run as bob, whom no rule reviews: the webhook does not repair
// his undo's last-applied, so the periodic audit finds it stale. Drawn from
// the generator's second source: the seed's other steps stay the same.
func (g *gen) exempted(s step) step {
	if s.Kind != undo || !g.exemptUndo || g.self.IntN(2) > 0 {
		return s
	}
	s.As, s.Writer = bob, s.Writer+" (exempt)"
	return s
}

// exemptUndoStep is, in one step in eight of a sequence with exemptUndo
// where an undo fits, bob's kubectl rollout undo (undos of the catalogue
// are too rare for the periodic audit's repairs: none in the 400 steps of
// the pinned seed). Drawn from the generator's second source.
func (g *gen) exemptUndoStep() (step, bool) {
	if !g.exemptUndo || !workload(g) || g.templates < 2 || g.paused || g.self.IntN(8) > 0 {
		return step{}, false
	}
	return step{Writer: "kubectl rollout undo (exempt)", As: bob, Kind: undo, Args: []string{"rollout", "undo", g.o.ref()}}, true
}

// stepEnded notes the end of a step and the sequence's longest step
// (awaitAudit).
func (r *runner) stepEnded() {
	r.stepEnd = time.Now()
	r.longest = max(r.longest, r.stepEnd.Sub(r.stepStart))
}

// betweenSteps judges what changed in the object since the previous
// step: the only writer that is no step is the periodic audit (the
// controllers keep status and bookkeeping, the mesh injector stamps its
// annotation, the autoscaler's replicas are recorded as its steps). Where
// it may fix (fixable), it may remove a person's orphan (notAnOrphan) and
// repair last-applied after an undo; elsewhere nothing.
func (r *runner) betweenSteps(i int, now map[string]any) {
	prev := r.last
	if prev == nil || now == nil || deleting(prev) || deleting(now) || recreated(prev, now) {
		return
	}
	for _, q := range changed(prev, now) {
		if meshStamped(q) || r.hpa != nil && q.String() == framework.ReplicasPath.String() {
			continue
		}
		if !r.fixable() {
			r.fail(i, "self-write-scope", wrongSelfWrite, "before this step, a writer that is no step (the periodic audit) changed %s of %s, which it may not fix (namespace scope %q, fix label %v)",
				q, r.o.ref(), r.scope, carriesFixLabel(r.scope))
			continue
		}
		if why := r.notAnOrphan(q, prev, now); why != "" {
			r.fail(i, "self-write-lost", wrongSelfWrite, "before this step, the periodic audit %s", why)
			continue
		}
		r.wrote["periodic audit removals"]++
		r.t.Logf("before step %d, the periodic audit removed %s (a person's orphan)", i+1, q)
	}
	r.forget(prev, now)
	// The mesh injector stamps the audit's write too: its stamp stays a
	// robot's field.
	r.recordMesh(prev, now)
	if la, was := lastApplied(now), lastApplied(prev); !cmp.Equal(la, was) {
		r.wrote["periodic audit repairs"]++
		r.t.Logf("before step %d, the periodic audit rewrote last-applied at %v", i+1, framework.ChangedPaths(framework.Path(), was, la))
		r.judgeRepair(i, "the periodic audit", r.fixable(), prev, now)
	}
}

// deleting reports whether obj is being deleted.
func deleting(obj map[string]any) bool {
	_, ok := framework.Path("metadata", "deletionTimestamp").Lookup(obj)
	return ok
}

// notAnOrphan says why a fix that turned before into after at q wrote
// something that is not a fresh orphan by the sequence's own record of
// who set what: "" when q was removed and is a field a person set
// outside apply (no robot's, undo's, server-side applier's or kubectl
// apply's; a kubectl edit --save-config's whose last-applied was removed
// is the person's edit's again once last-applied is recorded anew) that
// before's last-applied does not have, that no manifest
// hands over (replicas, a pause) and that no hand-over the object records
// took (handedOverOn).
func (r *runner) notAnOrphan(q fieldPath, before, after map[string]any) string {
	f, set := r.fields[q.String()]
	_, live := q.Lookup(after)
	_, declared := q.Lookup(lastApplied(before))
	switch {
	case live:
		return fmt.Sprintf("changed %s (a fix only removes)", q)
	case handedOver(q):
		return fmt.Sprintf("removed %s, which a manifest that leaves it out hands over (kubectl scale, an autoscaler, kubectl rollout pause): never an orphan", q)
	case handedOverOn(before, q.String()):
		return fmt.Sprintf("removed %s, which kubectl hygiene handover handed over (the object's record lists it)", q)
	case !set || !f.person:
		return fmt.Sprintf("removed %s, which no person set outside apply (a robot's, an applier's or the server's)", q)
	case f.undo:
		return fmt.Sprintf("removed %s, which kubectl rollout undo restored from an applied revision", q)
	case f.applied:
		return fmt.Sprintf("removed %s, which a person applied server-side (its applier owns it)", q)
	case f.unattributed && (!f.forgottenSave || lastApplied(before) == nil):
		return fmt.Sprintf("removed %s, which no reader can attribute to a person (set under kubectl apply's field manager, scaled to or from 0, or by a --save-config that recorded the same last-applied)", q)
	case declared:
		return fmt.Sprintf("removed %s, which last-applied has", q)
	}
	return ""
}

// handedOver reports whether q is a field that a manifest leaving it out
// hands over to another writer (docs/rules.md): the replicas of kubectl
// scale or an autoscaler, the pause of kubectl rollout pause.
func handedOver(q fieldPath) bool {
	return q.String() == framework.ReplicasPath.String() || q.String() == "spec.paused"
}

// judgeAuditEvents checks the periodic audit's AuditFixed events on the
// sequence's object: none where it may not fix. An event also catches a
// fix that landed inside a step, which betweenSteps cannot tell from the
// step's own write.
func (r *runner) judgeAuditEvents(i int) {
	list, err := r.f.Client.EventsV1().Events(r.f.Namespace).List(r.t.Context(), metav1.ListOptions{})
	if err != nil {
		r.t.Logf("listing the events: %v", err)
		return
	}
	for _, e := range list.Items {
		if e.Reason != "AuditFixed" || e.Regarding.Name != r.o.name {
			continue
		}
		r.wrote["AuditFixed events"]++
		if !r.fixable() {
			r.fail(i, "self-write-scope", wrongSelfWrite, "the periodic audit fixed %s, which it may not fix (namespace scope %q, fix label %v): %s",
				r.o.ref(), r.scope, carriesFixLabel(r.scope), e.Note)
		}
	}
}

// auditConflicts is the server's count of fixes it left unwritten because
// the object changed after its scan (apply_hygiene_audit_fixes_total
// with result conflict).
func auditConflicts(page string) int {
	n := 0
	for _, line := range framework.MetricLines(page, "apply_hygiene_audit_fixes_total{") {
		if !strings.Contains(line, `result="conflict"`) {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &v); err == nil {
			n += int(v)
		}
	}
	return n
}
