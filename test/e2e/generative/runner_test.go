package generative_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// runner runs the steps of one sequence on one object in a namespace of
// its own, and judges each against the truth model.
type runner struct {
	t       *testing.T
	f       *framework.Framework
	o       object
	p       *framework.Predictor
	kubectl map[who]framework.Kubectl
	// people counts the sequence's people so far (personsClient).
	people int
	// clients names the GENERATIVE_KUBECTL client behind each path.
	clients map[string]string
	// fields are the fields set outside apply that are still live, by
	// path, with who set them.
	fields map[string]setField
	// ssa are the manifests applied server-side since the creation.
	ssa []map[string]any
	// kubectlSSA are those of ssa applied under kubectl's own field
	// manager, kubectl (kubectl apply --server-side, kubectl hygiene
	// migrate): a person's manifests.
	kubectlSSA []map[string]any
	// applied are every manifest applied in the sequence (client- or
	// server-side, or saved as last-applied), for what an undo may
	// restore.
	applied []map[string]any
	// replaced are the manifests kubectl replace wrote in the sequence
	// (with or without --save-config): managedFields name kubectl-replace
	// for their fields either way.
	replaced []map[string]any
	// recreatedByReplace is the spec of the object as the last kubectl
	// replace --force re-created it, server defaults included; nil once
	// a later kubectl replace changed it (replacedDefaults) or another
	// write re-created it.
	recreatedByReplace map[string]any
	// replacedDefaults are the specs of re-creations by kubectl replace
	// that a later kubectl replace changing the object in place claimed:
	// its entry, moved, names a person for the re-creation's defaults
	// (replacedDefaultsLeftOut).
	replacedDefaults []map[string]any
	// created is the object as its creation left it, with its manifest
	// (noteCreation), for staleCreationDefault.
	created *createdObject
	// savedEdits are the fields a person's write that also saved the
	// object as last-applied (kubectl edit --save-config) changed, each
	// with the object after that write (savedLeftOut).
	savedEdits []savedEdit
	// offer is the hand-over that the previous step's denial printed
	// (offeredHandover); only the very next step may follow it.
	offer *handoverOffer
	// orphanCommands are the commands that the previous apply's
	// orphaned-field warnings print, by the path they remove; warned is
	// the object after that apply, which they describe.
	orphanCommands map[string]string
	warned         map[string]any
	// remedied are the paths whose printed command ran since the last
	// apply.
	remedied []string
	// restored, when set, answers restoredOnRemoval instead of the API
	// server (table tests).
	restored func(q fieldPath, obj map[string]any) bool
	// leftOut counts, by rule, the warnings of the step that the webhook
	// left out to keep within the API server's 4 KiB (they cannot be
	// named, so they count for the fields no printed warning names).
	leftOut map[string]int
	// hpa models the HorizontalPodAutoscaler of kubectl autoscale.
	hpa      *autoscaler
	failures []failure
	steps    int
	// stop, when set, ends the sequence at the first failure it accepts
	// (a minimisation's replay).
	stop func(failure) bool
	// scope is the scope of the namespace (scopeOf): in a labelled one
	// the webhook's answers are not judged, apply-hygiene's own writes
	// are.
	scope string
	// last is the object after the previous step; undone reports whether
	// the last template write was kubectl rollout undo; wrote counts
	// apply-hygiene's own writes.
	last   map[string]any
	undone bool
	wrote  map[string]int
	// stepStart and stepEnd bound the last step, and longest is the
	// sequence's longest step (awaitAudit).
	stepStart, stepEnd time.Time
	longest            time.Duration
	// awaitScan holds the next step until a scan that started after the
	// last step is recorded (after bob's exempt undo).
	awaitScan bool
	// binaries are the paths of kubectl under other file names (oc), by
	// name (binary).
	binaries map[string]string
}

// setField is a field a writer set outside client-side apply.
type setField struct {
	path   fieldPath
	person bool
	// undo marks a field an undo restored (from an applied revision).
	undo bool
	// applied marks a field a server-side apply set: its applier owns
	// it (never an orphan), but it drifted from last-applied.
	applied bool
	// unattributed marks a field a person set where managedFields cannot
	// say so: under kubectl apply's own field manager (kubectl set image
	// --field-manager=kubectl-client-side-apply: managedFields then say an
	// applier set it), a count a /scale wrote from or to 0 (the Scale's
	// replicas is omitempty, so the API server records no manager of a
	// count scaled from or to zero: the count looks like the server's
	// default, or like a robot's scale to zero), a count a /scale left
	// owned by no entry (scaledUnowned), or a field that kubectl
	// apply --server-side's migration alone dropped (migratedOnly:
	// removed, or the server's default, which no entry owns). No later
	// write can tell otherwise, so findings of it are allowed but not
	// required. Also what oc rollout undo restored: managedFields name oc,
	// which apply-hygiene counts as a person's only when configured
	// (--person-field-managers; docs/merge.md names kubectl's managers),
	// so for them oc is a tool (generative seed 37964, sequence 000: Helm's
	// annotations that oc's undo of a Deployment put back, owned by oc
	// alone). Also what a --save-config that recorded the last-applied
	// already there changed, by a person or not: the sequence knows it for
	// an apply's, managedFields say an edit's.
	unattributed bool
	// forgottenSave marks an unattributed field that a person's kubectl
	// edit --save-config set and recorded in a last-applied that a later
	// write removed from the object (Flux's clean-up, kubectl annotate
	// last-applied-; forgetSaves): managedFields name the person's
	// kubectl-edit for it, and once a last-applied without it is
	// recorded again, the apply of a manifest without it would have
	// deleted it through the saved one. A fix may then remove it
	// (notAnOrphan) as any person's orphan; a finding of it stays
	// allowed, never required. Not a save that a rewrite of last-applied
	// forgot: that may be a person's hand-over (kubectl apply
	// edit-last-applied), which kubectl never removes.
	forgottenSave bool
}

// failure is one check a step failed.
type failure struct {
	// step is the index of the step in its sequence.
	step int
	// check names the check; counted is the summary's count it adds to
	// (falseWarning, falseDenial, miss, webhookError) or "".
	check, counted string
	detail         string
}

// signature is what a minimised sequence must still fail: the check and
// the field path it names.
func (f failure) signature() string { return f.check + " " + pathOf.FindString(f.detail) }

// pathOf finds the field path in a failure's detail.
var pathOf = regexp.MustCompile(`(spec|metadata|data)[.\[]\S*`)

// Counts of the summary line.
const (
	falseWarning = framework.FalseWarning
	falseDenial  = framework.FalseDenial
	miss         = framework.Miss
	webhookError = "webhook error"
)

func newRunner(t *testing.T, o object, p *framework.Predictor) *runner {
	return &runner{t: t, f: framework.New(t), o: o, p: p, kubectl: map[who]framework.Kubectl{}, fields: map[string]setField{}, wrote: map[string]int{}}
}

// as returns kubectl as who, creating the identity on first use.
func (r *runner) as(w who) framework.Kubectl {
	if k, ok := r.kubectl[w]; ok {
		return k
	}
	var k framework.Kubectl
	switch ns := w.namespaceOf(); ns {
	case "":
		k = r.f.Kubectl
		k.Path = r.personsClient(k.Path)
		k.Kubeconfig = personKubeconfig(r.t, r.f, string(w))
		r.f.Grant(r.t, "edit", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: string(w)})
	case ".":
		k = r.f.KubectlAsServiceAccount(r.t, string(w))
	default:
		k = r.f.KubectlAsServiceAccountIn(r.t, ns, string(w))
	}
	r.kubectl[w] = k
	return k
}

// personsClient returns the kubectl binary the next person of the
// sequence runs: built, the one hack/ builds, or, with
// GENERATIVE_KUBECTL=path[,path…], those clients in turn by the order in
// which the sequence's people first write (a person keeps hers), so that
// older kubectl releases (their field managers, their patches) meet the
// same oracle. The order depends only on the sequence, so a replay runs the
// same clients.
func (r *runner) personsClient(built string) string {
	list := os.Getenv("GENERATIVE_KUBECTL")
	if list == "" {
		return built
	}
	clients := strings.Split(list, ",")
	r.people++
	client := clients[(r.people-1)%len(clients)]
	// Under its own name, kubectl: the API server names the field manager
	// of a write that sends none (rollout undo, scale) after the binary
	// (its User-Agent), and kubectl.1.27 would be a renamed kubectl,
	// another writer ("oc" steps rename the person's client).
	path := filepath.Join(r.t.TempDir(), "kubectl")
	if err := linkOrCopy(client, path); err != nil {
		r.t.Fatalf("GENERATIVE_KUBECTL: %v", err)
	}
	if r.clients == nil {
		r.clients = map[string]string{}
	}
	r.clients[path] = filepath.Base(client)
	return path
}

// clientOf names the kubectl binary w runs when it is not the one hack/
// builds, for the step's log line.
func (r *runner) clientOf(w who) string {
	if k, ok := r.kubectl[w]; ok && r.clients[k.Path] != "" {
		return " with " + r.clients[k.Path]
	}
	return ""
}

// people holds the kubeconfig of each person, written once: writing it
// again (framework.KubectlAs) while another sequence's kubectl reads it
// leaves that kubectl without a server.
var people struct {
	sync.Mutex
	kubeconfigs map[string]string
}

// personKubeconfig returns the kubeconfig of the user name, writing it
// on first use.
func personKubeconfig(t *testing.T, f *framework.Framework, name string) string {
	people.Lock()
	defer people.Unlock()
	if path, ok := people.kubeconfigs[name]; ok {
		return path
	}
	if people.kubeconfigs == nil {
		people.kubeconfigs = map[string]string{}
	}
	people.kubeconfigs[name] = f.KubectlAs(t, name).Kubeconfig
	return people.kubeconfigs[name]
}

// fail records a failed check of step i.
func (r *runner) fail(i int, check, counted, format string, args ...any) {
	f := failure{step: i, check: check, counted: counted, detail: fmt.Sprintf(format, args...)}
	r.failures = append(r.failures, f)
	r.t.Logf("FAILED CHECK %s (%s) at step %d: %s", check, counted, i+1, f.detail)
}

// stopped reports whether a replay found the failure it looks for.
func (r *runner) stopped() bool {
	if r.stop == nil {
		return false
	}
	for _, f := range r.failures {
		if r.stop(f) {
			return true
		}
	}
	return false
}

// urlPath is the object's path on the API server in namespace ns.
func (r *runner) urlPath(ns string) string {
	prefix := "/api/v1"
	if v, _ := r.o.manifest["apiVersion"].(string); strings.Contains(v, "/") {
		prefix = "/apis/" + v
	}
	return prefix + "/namespaces/" + ns + "/" + strings.ToLower(r.o.kind) + "s"
}

// get reads the object in namespace ns; nil when there is none.
func (r *runner) get(ns string) map[string]any {
	raw, err := r.f.Client.CoreV1().RESTClient().Get().AbsPath(r.urlPath(ns) + "/" + r.o.name).DoRaw(context.Background())
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		r.t.Fatalf("getting %s: %v", r.o.ref(), err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		r.t.Fatalf("decoding %s: %v", r.o.ref(), err)
	}
	return obj
}

// described is the object as apply-hygiene's messages name it.
func (r *runner) described() string {
	return fmt.Sprintf("%s %s/%s", r.o.kind, r.f.Namespace, r.o.name)
}

// state reports whether the object exists and is being deleted.
func (r *runner) state() (exists, deleting bool) {
	obj := r.get(r.f.Namespace)
	_, deleting = framework.Path("metadata", "deletionTimestamp").Lookup(obj)
	return obj != nil, deleting
}

// run runs step i and judges it; it reports whether the step passed.
func (r *runner) run(i int, s step) bool {
	r.t.Helper()
	r.steps++
	// The autoscaler's clamp may take its sync period (15 s), past
	// awaitAudit's window: awaited first, so that a scan due after it
	// is held off the step too (soak seed 271126, sequence 710: the scan
	// that fell due during the clamp removed a person's orphan between
	// the step's kubectl hygiene diff and its apply, and the apply was
	// judged to have removed it).
	r.settleAutoscaler(i)
	r.awaitAudit(i)
	r.betweenSteps(i, r.get(r.f.Namespace))
	r.stepStart = time.Now()
	defer r.stepEnded()
	defer func() { r.last = r.get(r.f.Namespace) }()
	if s.Kind == handover {
		return r.runHandover(i, s)
	}
	r.offer = nil
	if s.Kind == remedy {
		r.runRemedies(i)
		return true
	}
	if s.Kind == undo || s.Kind == dryRunUndo {
		r.waitObserved()
	}
	before := r.get(r.f.Namespace)
	if s.Kind == hygiene {
		res := r.runHygiene(s)
		if s.Args[1] == "migrate" && res.ExitCode == 0 && lastApplied(before) != nil {
			// kubectl hygiene migrate gives last-applied's fields to
			// kubectl's server-side apply (manager kubectl, Apply), as
			// kubectl apply --server-side's own migration does: from
			// then on they are a server-side apply's (soak seed 271126,
			// sequences 067, 071, 098: [server-side-owned] after it).
			r.ssa = append(r.ssa, lastApplied(before))
			r.kubectlSSA = append(r.kubectlSSA, lastApplied(before))
		}
		r.webhookErrors(i, res)
		r.judgeSelfWrite(i, s, res, before, r.get(r.f.Namespace))
		// The commands that the apply before printed stay for the next
		// step, which runs them on what this command left (judgeRemedy).
		return true
	}
	judged := r.judged()
	var predicted func(framework.Result) []string
	if judged && s.Kind == clientSideApply && s.As == alice && len(s.Args) == 3 && before != nil && r.p != nil {
		file := filepath.Join(r.t.TempDir(), "manifest.json")
		if err := os.WriteFile(file, []byte(s.Stdin), 0o600); err != nil {
			r.t.Fatal(err)
		}
		predicted = r.p.PredictBut(r.t, r.as(alice), fmt.Sprintf("step %d", i+1), file, func(path string) bool {
			return path == meshPath.String()
		})
	}
	res := r.execute(r.as(s.As), "", s)
	before = r.afterAutoscale(i, s, res, before)
	r.t.Logf("STEP %d: %s, as %s%s: exit %d (last-applied before: %v)", i+1, s.Writer, s.As, r.clientOf(s.As), res.ExitCode, lastApplied(before) != nil)
	if s.Kind == finalizerRemoval && res.ExitCode == 0 {
		r.waitGone()
	}
	after, clamp := r.scaledThenClamped(s, res, r.get(r.f.Namespace))
	if predicted != nil {
		for _, problem := range predicted(res) {
			r.fail(i, "diff-predicts", "", "%s", problem)
		}
	}
	got, _ := framework.ParseOutput(r.described(), res.Stderr)
	got, r.leftOut = framework.WithoutLeftOut(got)
	broken := r.webhookErrors(i, res)
	denied := false
	for _, g := range got {
		denied = denied || g.Action == framework.Deny
	}
	if judged && denied && !broken {
		r.offer = offeredHandover(s, got)
	}
	switch {
	case !judged:
	case s.Kind == clientSideApply:
		r.judgeApply(i, s, res, got, before, after)
	case s.Kind == dryRunApply:
		r.judgeDryRun(i, s, got, before)
	default:
		r.judgeWrite(i, s, res, got, before, after)
	}
	if judged && res.ExitCode != 0 && !denied && !broken && s.Kind != undo && s.Kind != dryRunUndo {
		r.judgeFailure(i, s, before)
	}
	r.judgePrune(i, s, res, before, after)
	passed := res.ExitCode == 0
	if passed {
		r.record(s, before, after)
		r.noteUndo(s, before, after)
		r.awaitScan = r.awaitScan || s.Kind == undo && s.As == bob
	}
	if clamp != nil {
		r.noteClamp(i, r.hpa.allowed(replicasOf(after), time.Now()), after, clamp)
	}
	if s.Kind != clientSideApply {
		// The printed commands are for the object as that apply left
		// it: only the very next step runs them, or the one after
		// apply-hygiene's own command.
		r.orphanCommands = nil
	}
	return passed
}

// webhookError is how kubectl shows that a webhook answered with an error
// or could not be called; a denial of apply-hygiene without a [rule] is an
// error answered as a denial.
var webhookErrorLine = regexp.MustCompile(`failed calling webhook|Internal error occurred|apply-hygiene\.io" denied the request: [^\[]`)

// webhookErrors fails step i when kubectl shows an error of a webhook.
func (r *runner) webhookErrors(i int, res framework.Result) bool {
	line := webhookErrorLine.FindString(res.Stderr)
	if line == "" {
		return false
	}
	r.fail(i, "no-webhook-error", webhookError, "$ kubectl %s: %s", strings.Join(res.Args, " "), strings.TrimSpace(res.Stderr))
	return true
}

// waitObserved waits until the controller has seen the newest spec, so
// that the revision of the current pod template exists for an undo.
func (r *runner) waitObserved() {
	r.t.Helper()
	framework.Eventually(r.t, 30*time.Second, "the controller to observe "+r.o.ref(), func(context.Context) (bool, error) {
		obj := r.get(r.f.Namespace)
		gen, _ := framework.GenerationPath.Lookup(obj)
		seen, _ := framework.Path("status", "observedGeneration").Lookup(obj)
		g, _ := gen.(float64)
		s, _ := seen.(float64)
		return obj == nil || s >= g, nil
	})
}

// waitGone waits until the deleted object is gone once its finalizer is
// removed (the garbage collector finishes a foreground deletion).
func (r *runner) waitGone() {
	r.t.Helper()
	framework.Eventually(r.t, 60*time.Second, r.o.ref()+" to be gone", func(context.Context) (bool, error) {
		exists, _ := r.state()
		return !exists, nil
	})
}

// planted are the live fields a person set outside apply; with
// serverSide, also those a person applied server-side.
func (r *runner) planted(serverSide bool) []fieldPath {
	recorded := handoverRecord(r.last)
	return r.fieldsWhere(func(f setField) bool {
		return f.person && !f.unattributed && (serverSide || !f.applied) && !handedOverIn(recorded, f.path.String())
	})
}

// handedOverByPeople are the live fields a person set outside apply that
// the object's record of hand-overs lists: their new writer's, never an
// orphan, but a manifest that sets them takes them back.
func (r *runner) handedOverByPeople() []fieldPath {
	recorded := handoverRecord(r.last)
	return r.fieldsWhere(func(f setField) bool {
		return f.person && !f.unattributed && !f.applied && handedOverIn(recorded, f.path.String())
	})
}

// failedChecks are the checks that failed, in order (table tests).
func (r *runner) failedChecks() []string {
	var out []string
	for _, f := range r.failures {
		out = append(out, f.check)
	}
	return out
}

// fieldsWhere are the paths of the live fields set outside apply that
// keep holds for.
func (r *runner) fieldsWhere(keep func(setField) bool) []fieldPath {
	var out []fieldPath
	for _, f := range r.fields {
		if keep(f) {
			out = append(out, f.path)
		}
	}
	return out
}

// appliedByPeople are the live fields a person applied server-side, but
// those that managedFields give to nobody (unattributed).
func (r *runner) appliedByPeople() []fieldPath {
	return r.fieldsWhere(func(f setField) bool { return f.person && f.applied && !f.unattributed })
}

// setByRobots are the live fields that writers other than people set
// outside apply (an undo's restored fields are a person's), and those a
// person set under kubectl apply's field manager: findings of them are
// allowed, never required.
func (r *runner) setByRobots() []fieldPath {
	return r.fieldsWhere(func(f setField) bool { return !f.person && !f.undo || f.unattributed })
}

// unattributedByPeople are the live fields a person set outside apply
// where managedFields cannot say so (unattributed), but those a person
// applied server-side: among them a value that a person's kubectl edit
// --save-config recorded in a last-applied that a later write dropped
// (forgetSaves). An apply that leaves them out can never remove them, so
// an orphaned-field finding of them is true, allowed but never required
// (soak seed 271126, sequence 413: kubectl-edit's label after Flux's
// clean-up of last-applied, at the apply that recorded a manifest without
// it and at every apply since).
func (r *runner) unattributedByPeople() []fieldPath {
	return r.fieldsWhere(func(f setField) bool { return f.person && f.unattributed && !f.applied })
}

// record updates who set which field after step s passed, and whether
// an autoscaler is left.
func (r *runner) record(s step, before, after map[string]any) {
	r.forgetDeletedAutoscaler(s)
	r.keepUnchangedSaves(before, after)
	switch {
	case s.Kind == clientSideApply || s.Kind == serverSideApply:
		r.applied = append(r.applied, decodeManifest(s.Stdin))
	case s.RewritesLastApplied:
		r.applied = append(r.applied, lastApplied(after))
	}
	if len(s.Args) > 0 && s.Args[0] == "replace" && after != nil {
		r.replaced = append(r.replaced, decodeManifest(s.Stdin))
	}
	r.noteReplacedDefaults(s, before, after)
	switch {
	case after == nil || before == nil || recreated(before, after):
		// A creation, a deletion, or a re-creation (kubectl replace
		// --force): what was set on the old object is gone, and what the
		// server defaults on the new one is nobody's.
		r.fields, r.ssa, r.kubectlSSA, r.savedEdits = map[string]setField{}, nil, nil, nil
		r.noteCreation(s, after)
		if after != nil && s.Kind == serverSideApply {
			r.recordServerSideApply(s)
		}
	case s.Kind == dryRunApply || s.Kind == dryRunUndo:
	case s.RewritesLastApplied && sameRecord(before, after):
		// A --save-config that records the manifest last-applied already
		// has (Argo CD's Replace=true of an unchanged Git manifest) leaves
		// no trace of an apply: the annotation's owner does not move,
		// and managedFields give what the write changed (a count its
		// manifest leaves out, reset to the server's default) to its
		// manager, as for a plain kubectl replace that keeps
		// last-applied. No reviewer can tell it from an edit, so a
		// finding of those fields is allowed, never required (soak seed
		// 271126, sequence 056: [apply-reverts-drift] of the count that
		// Argo CD's replace reset to 1).
		for _, q := range changed(before, after) {
			r.fields[q.String()] = setField{path: q, person: s.As.setsAsAPerson() && !meshStamped(q), unattributed: true}
		}
	case s.Kind == clientSideApply || s.RewritesLastApplied:
		if s.RewritesLastApplied && s.As.person() {
			for _, q := range changed(before, after) {
				r.savedEdits = append(r.savedEdits, savedEdit{path: q, after: after})
			}
		}
		for key, f := range r.fields {
			_, live := f.path.Lookup(after)
			// A removal that the recorded last-applied still has a value
			// for stays drift: kubectl apply set-last-applied writes
			// nothing but last-applied (generative seed 281140, sequence
			// 010: a template annotation that bob's undo removed, then
			// set-last-applied of a manifest that has it).
			_, recorded := f.path.Lookup(lastApplied(after))
			gone := !live && (s.Kind == clientSideApply || !recorded)
			if gone || !framework.SameAt(f.path, before, after) {
				// Gone, or the apply's value now.
				delete(r.fields, key)
			}
			// A field the manifest has at the value it had stays its
			// writer's in managedFields: the apply holds it only through
			// last-applied (truthOfApply).
		}
	default:
		if s.Kind == serverSideApply {
			r.recordServerSideApply(s)
		}
		for _, q := range changed(before, after) {
			r.fields[q.String()] = setField{path: q, person: s.As.setsAsAPerson() && !meshStamped(q), undo: s.Kind == undo, applied: s.Kind == serverSideApply,
				unattributed: s.fieldManagerFlag() == clientSideApplier || s.Binary == "oc" || scaledThroughZero(s, q, before, after) || scaledUnowned(s, q, after) ||
					s.Kind == serverSideApply && s.Manager == "" && migratedOnly(q, decodeManifest(s.Stdin), before, after)}
		}
	}
	r.forgetSaves(before, after)
	r.recordMesh(before, after)
}

// recordServerSideApply keeps the manifest of a server-side apply s (in
// ssa, and in kubectlSSA when kubectl's own field manager applied it).
func (r *runner) recordServerSideApply(s step) {
	m := decodeManifest(s.Stdin)
	r.ssa = append(r.ssa, m)
	if s.syncsLastApplied() {
		r.kubectlSSA = append(r.kubectlSSA, m)
	}
}

// noteReplacedDefaults keeps the spec of a re-creation by kubectl replace
// --force, and hands it to replacedDefaults when a later kubectl replace
// changes the object in place.
func (r *runner) noteReplacedDefaults(s step, before, after map[string]any) {
	replace := len(s.Args) > 0 && s.Args[0] == "replace"
	switch {
	case after == nil || before == nil || recreated(before, after):
		r.recreatedByReplace = nil
		if replace && after != nil {
			r.recreatedByReplace = map[string]any{"spec": after["spec"]}
		}
	case replace && r.recreatedByReplace != nil && len(changed(before, after)) > 0:
		r.replacedDefaults = append(r.replacedDefaults, r.recreatedByReplace)
		r.recreatedByReplace = nil
	}
}

// forgetSaves turns the values that a person's kubectl edit --save-config
// recorded (savedEdits) back into fields set outside apply, allowed, never
// required, once a write left a last-applied without them while they
// stayed: one that removed last-applied from the object (Flux's clean-up
// patch, kubectl annotate's removal of it) or recorded a manifest without
// them or with another value there (kubectl apply set-last-applied;
// generative seed 281140, sequence 009: the next apply sets the edited
// image back, and says it discards kubectl-edit's value). Nothing records
// the save any more, and managedFields name kubectl-edit for the value,
// after the last client-side apply. An apply that then overwrites it may
// warn that it discards a value kubectl-edit set since the last apply,
// which is what happened (soak seed 271126, sequence 332), and an apply
// that leaves it out may call it orphaned: it records a last-applied
// without it and can never remove it (unattributedByPeople; sequence 413).
func (r *runner) forgetSaves(before, after map[string]any) {
	if before == nil || after == nil || recreated(before, after) {
		return
	}
	annotation := framework.Path("metadata", "annotations").Key(lastAppliedKey)
	_, had := annotation.Lookup(before)
	_, has := annotation.Lookup(after)
	was, is := lastApplied(before), lastApplied(after)
	for _, e := range r.savedEdits {
		recorded := framework.SameAt(e.path, was, e.after)
		still := framework.SameAt(e.path, is, after)
		_, known := r.fields[e.path.String()]
		dropped := had && !has
		forgotten := dropped || recorded && !still
		if v, ok := e.path.Lookup(after); ok && forgotten && !known && framework.SameAt(e.path, e.after, after) && v != nil {
			r.fields[e.path.String()] = setField{path: e.path, person: true, unattributed: true, forgottenSave: dropped}
		}
	}
}

// keepUnchangedSaves forgets the saved edits whose value the write from
// before to after changed: the edit's value is gone, and a later write
// that puts the same value back is that write's (an apply's, which then
// owns it).
func (r *runner) keepUnchangedSaves(before, after map[string]any) {
	if before == nil || after == nil {
		return
	}
	r.savedEdits = slices.DeleteFunc(r.savedEdits, func(e savedEdit) bool {
		return !framework.SameAt(e.path, before, after)
	})
}

// scaledThroughZero reports whether step s wrote the count q through
// /scale from or to 0. The Scale's replicas is omitempty, so a count of 0
// is no field of it: from 0 the API server records no manager of the new
// count, and to 0 the scale's entry owns nothing and the count's owner
// loses it (TestScaleFromZeroLeavesTheCountUnowned). An unowned 0 that
// last-applied lacks is a person's kubectl scale --replicas=0 or a robot's
// (KEDA) alike: no later write can tell (soak seed 271126, sequence 226).
func scaledThroughZero(s step, q fieldPath, before, after map[string]any) bool {
	if len(s.Args) == 0 || s.Args[0] != "scale" || q.String() != framework.ReplicasPath.String() {
		return false
	}
	zero := func(obj map[string]any) bool {
		v, ok := q.Lookup(obj)
		return ok && fmt.Sprint(v) == "0"
	}
	return zero(before) || zero(after)
}

// scaledUnowned reports whether step s wrote the count q through /scale
// and after's managedFields (the API server's record, not apply-hygiene's
// reading of it) give it to no entry. The API server hands a /scale only
// the owners of the count it finds, and records no manager of a count that
// a /scale changes while no entry owns it; a /scale that leaves the count
// as it was splits its owner's entry in two under one identity, and the
// next /scale keeps only the one without the count. So a person's kubectl
// scale after a scale to the same count (a robot's, an autoscaler's) looks
// like anyone's: no later write can tell (soak seed 271126, sequences 744
// and 766; TestScaleOfAnUnownedCountRecordsNoManager). An object without
// managedFields (the table tests') tells nothing.
func scaledUnowned(s step, q fieldPath, after map[string]any) bool {
	if len(s.Args) == 0 || s.Args[0] != "scale" || q.String() != framework.ReplicasPath.String() {
		return false
	}
	entries, _ := framework.Path("metadata", "managedFields").Lookup(after)
	list, _ := entries.([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		fields, _ := m["fieldsV1"].(map[string]any)
		spec, _ := fields["f:spec"].(map[string]any)
		if _, owned := spec["f:replicas"]; owned {
			return false
		}
	}
	return len(list) > 0
}

// sameRecord reports whether before and after hold the same last-applied
// annotation, both some: a write that records a manifest recorded the one
// that was there.
func sameRecord(before, after map[string]any) bool {
	v, ok := framework.Path("metadata", "annotations").Key(lastAppliedKey).Lookup(before)
	w, _ := framework.Path("metadata", "annotations").Key(lastAppliedKey).Lookup(after)
	return ok && v == w
}

// recreated reports whether after is another object than before (a new
// uid under the same name).
func recreated(before, after map[string]any) bool {
	uid := func(obj map[string]any) string {
		meta, _ := obj["metadata"].(map[string]any)
		u, _ := meta["uid"].(string)
		return u
	}
	return uid(before) != uid(after)
}

// decodeManifest decodes a step's manifest; nil for none.
func decodeManifest(s string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return nil
	}
	return m
}
