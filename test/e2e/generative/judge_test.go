package generative_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// judgeApply checks a client-side apply's findings against the truth:
// every orphaned-field and apply-reverts-drift names a field a person set
// that is really orphaned or reverted, and every such field is named; the
// apply passes unless it drops replicas that the server would reset.
func (r *runner) judgeApply(i int, s step, res framework.Result, got []framework.Reported, before, after map[string]any) {
	remedied := r.remedied
	r.remedied = nil
	r.orphanCommands, r.warned = map[string]string{}, after
	manifest := decodeManifest(s.Stdin)
	if before == nil || sentNothing(res.Stdout, manifest) {
		// A creation (the webhooks see updates only), or nothing sent.
		r.nothingExpected(i, got)
		return
	}
	effect := after
	if res.ExitCode != 0 {
		effect = before
	}
	truth := truthOfApply(r.planted(false), r.appliedByPeople(), manifest, before, effect)
	// A revert of what a writer that is no person set (an autoscaler's
	// replicas) is true too, but not required.
	robots := truthOfApply(r.setByRobots(), nil, manifest, before, effect)
	// So is a revert of a field a person handed over (the object's record
	// lists it) that the manifest sets again: kubectl hygiene handover
	// told her that such an apply takes it back (generative seed 281192,
	// sequence 012: kubectl apply --prune -l, whose manifest carries the
	// label it selects by, after the label was handed over and edited).
	taken := truthOfApply(r.handedOverByPeople(), nil, manifest, before, effect)
	reverts := append(append(append(append(truth.reverts, robots.reverts...), taken.reverts...), r.ssaHeld(before, effect)...), r.replacedChanged(before, manifest)...)
	if res.ExitCode != 0 {
		// A denied apply's warnings say what it would have done, as a
		// dry run's do.
		reverts = append(r.drifted(before), r.ssaHeldAgainst(before, manifest)...)
	}
	allowedOrphans := append(append(append(append(truth.orphans, r.replacedLeftOut(before, manifest)...), r.savedLeftOut(effect, manifest)...), meshAllowed(before)...),
		r.replacedDefaultsLeftOut(before, manifest)...)
	allowedOrphans = append(allowedOrphans, truthOfApply(r.unattributedByPeople(), nil, manifest, before, effect).orphans...)
	r.judgeApplyFindings(i, got, before, manifest, allowedOrphans, reverts, remedied)
	if res.ExitCode != 0 || !s.As.person() || s.appliesUnnamed(before, after) || onlyShrankLastApplied(before, after) {
		// A tool's apply (Argo CD's under argocd-controller) may be
		// told, but no person reads it: the findings are required of a
		// person's next apply. Its apply of an unchanged manifest, under
		// argocd-controller and without a change of last-applied, is a
		// write no reviewer can tell from an edit, and so is a person's
		// under a field manager of her own, or one that only dropped
		// fields from last-applied.
		return
	}
	if slices.ContainsFunc(got, func(g framework.Reported) bool { return r.autoscaledTrue(g, manifest) }) {
		// replicas-autoscaled says it, naming the autoscaler
		// (apply-reverts-drift leaves spec.replicas to it).
		truth.reverts = slices.DeleteFunc(truth.reverts, func(q fieldPath) bool { return q.String() == framework.ReplicasPath.String() })
	}
	// A field the server gives back its value when it is removed is no
	// orphan, whoever set it: the warning's command would change nothing
	// (soak seed 271126, sequence 212: the pull policy Always that an
	// undo restored next to an image tagged latest).
	// One that an undo restored under the entry that records last-applied
	// is an orphan that no reader can tell from the record's fields
	// (undoneUnderTheRecord): allowed, never required.
	r.wantNamed(i, got, "orphaned-field", truth.orphans, before, func(q fieldPath) bool {
		return r.undoneUnderTheRecord(q, before) || r.restoredOnRemoval(i, q, effect)
	})
	// A value that kubectl's own server-side apply applied is a person's
	// manifest's (kubectl's Apply entry owns it beside whoever wrote it
	// first): a warning that the apply discards it is allowed, not
	// required (generative seed 281142, sequence 001, step 25: bob's
	// undo, then alice's kubectl apply --server-side of that image).
	held := appliedIn(r.kubectlSSA, before, truth.reverts)
	truth.reverts = slices.DeleteFunc(truth.reverts, func(q fieldPath) bool {
		return slices.ContainsFunc(held, func(h fieldPath) bool { return h.String() == q.String() })
	})
	// So is a revert of what an undo restored under the entry recording
	// last-applied: to a reader, the record's own value.
	r.wantNamed(i, got, "apply-reverts-drift", truth.reverts, nil, func(q fieldPath) bool { return r.undoneUnderTheRecord(q, before) })
}

// onlyShrankLastApplied reports whether a write from before to after
// changed nothing but last-applied (onlyLastAppliedDiffers), and dropped
// a field of it: what kubectl apply edit-last-applied's hand-over of that
// field sends under kubectl apply's field manager, and what kubectl apply
// of a manifest without a field at its server default (replicas: 1)
// leaves once the server has defaulted it again (generative seed 281154,
// sequence 007).
func onlyShrankLastApplied(before, after map[string]any) bool {
	old, new := lastApplied(before), lastApplied(after)
	if old == nil || new == nil || !onlyLastAppliedDiffers(before, after) {
		return false
	}
	return slices.ContainsFunc(framework.ChangedPaths(framework.Path(), old, new), func(q fieldPath) bool {
		_, kept := q.Lookup(new)
		return !kept
	})
}

// onlyLastAppliedDiffers reports whether before and after are the same
// object but for last-applied, what the API server keeps (status,
// managedFields, resourceVersion, generation) and the stamp that the
// sequence's mesh injector puts on every write that changes anything:
// all other metadata counts (finalizers, owner references, labels, the
// other annotations).
func onlyLastAppliedDiffers(before, after map[string]any) bool {
	return reflect.DeepEqual(withoutWhatTheServerKeeps(before), withoutWhatTheServerKeeps(after))
}

// withoutWhatTheServerKeeps is a copy of obj without what
// onlyLastAppliedDiffers leaves out.
func withoutWhatTheServerKeeps(obj map[string]any) map[string]any {
	out := runtime.DeepCopyJSON(obj)
	delete(out, "status")
	meta, _ := out["metadata"].(map[string]any)
	for _, k := range []string{"managedFields", "resourceVersion", "generation"} {
		delete(meta, k)
	}
	if annotations, _ := meta["annotations"].(map[string]any); annotations != nil {
		delete(annotations, lastAppliedKey)
		delete(annotations, meshStamp)
		delete(annotations, handedOverKey) // the webhook's record of a hand-over, written with the write
		if len(annotations) == 0 {
			delete(meta, "annotations")
		}
	}
	return out
}

// sentNothing reports whether kubectl apply's output says that it sent no
// request for the object of manifest: kubectl prints "<resource>/<name>
// unchanged" when its patch of the object is empty, and sends none then.
// The line need not be the last: apply --prune -l prints a line for each
// object it pruned after it (soak seed 271126, sequence 329:
// "configmap/gen-prune-anchor pruned").
func sentNothing(stdout string, manifest map[string]any) bool {
	name, _ := framework.Path("metadata", "name").Lookup(manifest)
	return slices.ContainsFunc(strings.Split(stdout, "\n"), func(line string) bool {
		return strings.HasSuffix(strings.TrimSpace(line), fmt.Sprintf("/%v unchanged", name))
	})
}

// replacedLeftOut are the fields of before, an object without
// last-applied, that a kubectl replace of the sequence wrote with the value
// they have and that manifest leaves out: kubectl apply can never remove
// them, and managedFields name kubectl-replace for them whether the
// replace also saved them as last-applied (a hand-over to apply) or not (a
// person's write). When a later write dropped last-applied (a plain
// kubectl replace of a manifest without it), an orphaned-field finding of
// them is true, allowed but not required.
func (r *runner) replacedLeftOut(before, manifest map[string]any) []fieldPath {
	if lastApplied(before) != nil {
		return nil
	}
	return r.replacedAt(before, manifest)
}

// replacedChanged are the fields of before, an object without
// last-applied, that a kubectl replace of the sequence wrote with the value
// they have and that manifest sets to another value. managedFields name
// kubectl-replace for them, and once a plain kubectl replace dropped
// last-applied nothing tells a replace that handed them to apply (with
// --save-config, or re-creating the object) from a person's edit by
// replace: an apply-reverts-drift finding of them is allowed, never
// required (soak seed 271126, sequence 646: the image of kubectl replace
// --force --save-config, then a plain kubectl replace, "set back" by an
// apply of a manifest with a new image).
func (r *runner) replacedChanged(before, manifest map[string]any) []fieldPath {
	if lastApplied(before) != nil {
		return nil
	}
	var out []fieldPath
	for _, q := range changed(before, manifest) {
		if _, in := q.Lookup(manifest); in && slices.ContainsFunc(r.replaced, func(m map[string]any) bool { return framework.SameAt(q, m, before) }) {
			out = append(out, q)
		}
	}
	return out
}

// replacedDefaultsLeftOut are the fields of a re-creation's spec by
// kubectl replace --force that a later kubectl replace changing the object
// in place claimed (replacedDefaults), still at that value in before, and
// that manifest leaves out. The re-creation owns its server defaults as
// kubectl create does; the later replace moves its entry's time, and from
// then on managedFields say a person's replace set them, which no reader
// can tell from a replace that sent them. An orphaned-field finding of
// them is allowed, never required (soak seed 271126, sequence 646: the
// imagePullPolicy Always the server defaulted for minio/minio:latest,
// orphaned once an apply changed the image).
func (r *runner) replacedDefaultsLeftOut(before, manifest map[string]any) []fieldPath {
	var out []fieldPath
	for _, q := range changed(before, manifest) {
		if _, in := q.Lookup(manifest); !in && slices.ContainsFunc(r.replacedDefaults, func(m map[string]any) bool { return framework.SameAt(q, m, before) }) {
			out = append(out, q)
		}
	}
	return out
}

// replacedAt are the fields that a kubectl replace of the sequence wrote
// with the value obj has and that manifest leaves out.
func (r *runner) replacedAt(obj, manifest map[string]any) []fieldPath {
	var out []fieldPath
	for _, m := range r.replaced {
		for _, q := range changed(map[string]any{}, m) {
			if _, in := q.Lookup(manifest); !in && framework.SameAt(q, m, obj) {
				out = append(out, q)
			}
		}
	}
	return out
}

// recordLeftOut are the orphans a server-side apply of manifest may
// report when effect, the object after it, has no last-applied (kubectl's
// migration dropped it): the fields a kubectl replace (re-creating the
// object, or with --save-config) or a person's kubectl edit --save-config
// wrote with the value effect has. They handed those fields to apply only
// through last-applied; the migration moves the fields of last-applied's
// owner alone (kubectl-client-side-apply once an apply took it over), so
// kubectl-replace's or kubectl-edit's entry keeps them, and no apply can
// remove them. A finding of them is true, allowed but not required, as at
// a client-side apply (replacedLeftOut, savedLeftOut; soak seed 271126,
// sequence 220: spec.minReadySeconds of kubectl replace --force
// --save-config).
func (r *runner) recordLeftOut(effect, manifest map[string]any) []fieldPath {
	if effect == nil || lastApplied(effect) != nil {
		return nil
	}
	return append(r.replacedAt(effect, manifest), r.savedLeftOut(effect, manifest)...)
}

// strandedByTheMove are the orphans a server-side apply of manifest may
// report when kubectl's migration dropped last-applied (before had one,
// effect has none): the fields of before's last-applied that effect
// still has, that manifest leaves out and that only kubectl apply's
// client-side entry (an Update of kubectl-client-side-apply) owns. The
// migration moves the fields of last-applied's owner; where another
// writer had taken the annotation over (kubectl edit --save-config, a
// replace), kubectl-client-side-apply keeps its fields, and no apply can
// remove them (docs/rules.md, orphaned-field: a field of the old
// last-applied that only client-side apply owns). A finding of them is
// true, allowed but not required (seed 281166, sequence 018: a label
// handed over with kubectl apply edit-last-applied, recorded again by a
// kubectl edit --save-config, then an apply --server-side under
// platform).
func strandedByTheMove(before, effect, manifest map[string]any) []fieldPath {
	la := lastApplied(before)
	if la == nil || effect == nil || lastApplied(effect) != nil {
		return nil
	}
	applier := func(manager, operation string) bool { return manager == clientSideApplier && operation == "Update" }
	byApplier := ownedBy(effect, applier)
	byOthers := ownedBy(effect, func(manager, operation string) bool { return !applier(manager, operation) })
	var out []fieldPath
	for _, q := range leaves(framework.Path(), nil, la) {
		_, live := q.Lookup(effect)
		_, declared := q.Lookup(manifest)
		if live && !declared && byApplier[q.String()] && !byOthers[q.String()] {
			out = append(out, q)
		}
	}
	return out
}

// savedEdit is a field that a person's write saving the object as
// last-applied changed, and the object after that write.
type savedEdit struct {
	path  fieldPath
	after map[string]any
}

// savedLeftOut are the fields a person's kubectl edit --save-config set
// that effect, an object whose last-applied a later write dropped (kubectl
// apply --server-side's migration), still has at the value that edit
// left, and that manifest leaves out. The edit handed them to apply only
// through last-applied: the migration moves kubectl-client-side-apply's
// fields alone, so they stay, owned by kubectl-edit, and no apply can
// remove them. An orphaned-field finding of them is true, allowed but not
// required (a person's edit that the oracle counted as an apply's).
func (r *runner) savedLeftOut(effect, manifest map[string]any) []fieldPath {
	if effect == nil || lastApplied(effect) != nil {
		return nil
	}
	var out []fieldPath
	for _, e := range r.savedEdits {
		_, live := e.path.Lookup(effect)
		_, inManifest := e.path.Lookup(manifest)
		if live && !inManifest && framework.SameAt(e.path, e.after, effect) {
			out = append(out, e.path)
		}
	}
	return out
}

// aliased is the field that q is the API server's alias of: a pod
// spec's deprecated serviceAccount mirrors serviceAccountName, and a
// finding of that field (whose command removes both) stands for both.
func aliased(q fieldPath) fieldPath {
	s := q.String()
	if !strings.HasSuffix(s, ".serviceAccount") || len(q) == 0 {
		return q
	}
	return append(append(fieldPath{}, q[:len(q)-1]...), framework.Path("serviceAccountName")...)
}

// countedLeftOut takes one warning of rule from the step's left-out
// count: a field that no printed warning names may be one of them.
func (r *runner) countedLeftOut(rule string) bool {
	if r.leftOut[rule] == 0 {
		return false
	}
	r.leftOut[rule]--
	return true
}

// removeCommand is the command an orphaned-field warning prints.
var removeCommand = regexp.MustCompile(`Remove it with: (kubectl patch .*[^…])$`)

// wantNamed fails step i for each field of want that no finding of rule
// names, but those that excused (when set) lets go unnamed.
func (r *runner) wantNamed(i int, got []framework.Reported, rule string, want []fieldPath, before map[string]any, excused func(fieldPath) bool) {
	for _, q := range want {
		if a := aliased(q); a.String() != q.String() && slices.ContainsFunc(want, func(w fieldPath) bool { return w.String() == a.String() }) {
			// The finding of the field it mirrors stands for both, also
			// when the webhook left it out (one left-out warning).
			continue
		}
		named := slices.ContainsFunc(got, func(g framework.Reported) bool {
			return g.Rule == rule && (names(g.Path, q) || names(g.Path, aliased(q)) || before != nil && wholeOf(g.Path, q, want, before))
		})
		if !named && (excused == nil || !excused(q)) && !r.countedLeftOut(rule) {
			r.fail(i, rule+"-reported", miss, "expected [%s] %s", rule, q)
		}
	}
}

// resets reports whether an apply of manifest drops replicas that
// last-applied has while live has other than the server's default 1:
// replicas-reset's denial is right.
func resets(before, manifest map[string]any) bool {
	_, had := framework.ReplicasPath.Lookup(lastApplied(before))
	_, has := framework.ReplicasPath.Lookup(manifest)
	live, _ := framework.ReplicasPath.Lookup(before)
	return had && !has && live != float64(1)
}

// nothingExpected fails step i for every finding.
func (r *runner) nothingExpected(i int, got []framework.Reported) {
	for _, g := range got {
		counted := falseWarning
		if g.Action == framework.Deny {
			counted = falseDenial
		}
		r.fail(i, "nothing-to-report", counted, "%s", g.Line)
	}
}

// judgeDryRun checks a server-side dry run of an apply: it changes
// nothing and is judged as the apply would be on the live object, without
// misses (nothing is written).
func (r *runner) judgeDryRun(i int, s step, got []framework.Reported, before map[string]any) {
	if before == nil {
		r.nothingExpected(i, got)
		return
	}
	manifest := decodeManifest(s.Stdin)
	truth := truthOfApply(r.planted(false), nil, manifest, before, before)
	truth.orphans = append(truth.orphans, truthOfApply(r.unattributedByPeople(), nil, manifest, before, before).orphans...)
	r.judgeApplyFindings(i, got, before, manifest, truth.orphans, append(r.drifted(before), r.ssaHeldAgainst(before, manifest)...), nil)
}

// ssaHeldAgainst is ssaHeld for an apply of manifest that wrote nothing
// (a dry run, a denied apply): the fields the manifest sets to another
// value than before's, which a server-side applier holds.
func (r *runner) ssaHeldAgainst(before, manifest map[string]any) []fieldPath {
	var set []fieldPath
	for _, q := range changed(before, manifest) {
		if _, ok := q.Lookup(manifest); ok {
			set = append(set, q)
		}
	}
	return r.heldOf(before, set)
}

// drifted are the fields that people or robots set (people's server-side
// applies included) and that differ from before's last-applied: the
// fields an apply that writes nothing may say it would revert.
func (r *runner) drifted(before map[string]any) []fieldPath {
	var out []fieldPath
	for _, p := range append(r.planted(true), r.setByRobots()...) {
		if !framework.SameAt(p, before, lastApplied(before)) {
			out = append(out, p)
		}
	}
	return out
}

// judgeApplyFindings checks what an apply of manifest to before said:
// a denial only of replicas-reset where it is right, orphaned-field only
// at orphans (and not again at a field whose printed command ran),
// apply-reverts-drift only at reverts, missing-last-applied only without
// last-applied. It keeps the commands the orphaned-field warnings print.
func (r *runner) judgeApplyFindings(i int, got []framework.Reported, before, manifest map[string]any, orphans, reverts []fieldPath, remedied []string) {
	for _, g := range got {
		switch {
		case g.Rule == "replicas-reset" && resets(before, manifest):
			// Denied for a person; a tool's apply (Argo CD's) may be
			// warned: the claim is the same.
		case g.Action == framework.Deny:
			r.fail(i, "apply-passes", falseDenial, "%s", g.Line)
		case g.Rule == "orphaned-field" && (namesAny(g.Path, orphans) || slices.ContainsFunc(orphans, func(q fieldPath) bool { return wholeOf(g.Path, q, orphans, before) })):
			if slices.Contains(remedied, g.Path) {
				r.fail(i, "remedy-sticks", falseWarning, "the printed command removed %s, and the apply reports it again: %s", g.Path, g.Line)
			}
			if cmd := removeCommand.FindStringSubmatch(g.Line); cmd != nil && r.orphanCommands != nil {
				r.orphanCommands[g.Path] = cmd[1]
			}
		case g.Rule == "apply-reverts-drift" && namesAny(g.Path, reverts):
		case g.Rule == "missing-last-applied" && lastApplied(before) == nil:
		case r.autoscaledTrue(g, manifest):
		default:
			r.fail(i, "finding-true", falseWarning, "%s", g.Line)
		}
	}
}

// judgeWrite checks a write that is not a client-side apply: writes that
// must pass pass; a denial names a field that last-applied owns, that the
// write moves away from it and that the next apply puts back; a person's
// write that moves such a field is denied (reported, for a server-side
// apply); an undo's repair changes only what the undo restored.
func (r *runner) judgeWrite(i int, s step, res framework.Result, got []framework.Reported, before, after map[string]any) {
	_, deleting := framework.Path("metadata", "deletionTimestamp").Lookup(before)
	quiet := deleting || s.Kind == deletion || s.Kind == finalizerRemoval || s.As.controller()
	undoing := s.Kind == undo || s.Kind == dryRunUndo
	mustPass := !s.As.person() || undoing || quiet
	effect, reapplied := after, map[string]any(nil)
	manifest := decodeManifest(s.Stdin) // what the write read from stdin, if anything
	denied := slices.ContainsFunc(got, func(g framework.Reported) bool { return g.Action == framework.Deny })
	if denied && before != nil {
		effect, reapplied, _ = r.replay(i, s, before, true)
	}
	moves := ownedMoves(before, effect)
	if s.namesApplier() {
		moves = undriftedBefore(moves, before)
	}
	if s.Kind == serverSideApply && s.Manager == "" && !s.syncsLastApplied() {
		moves = movedFrom(before, effect) // kubectl's, migration included
	}
	if s.RewritesLastApplied {
		moves = nil // it sets last-applied too: an apply by other means
	}
	allowed := append(append([]fieldPath(nil), moves...), r.ssaChanged(before, effect)...)
	var applied applyTruth // a server-side apply's orphans and reverts
	var allowedOrphans []fieldPath
	if s.Kind == serverSideApply && res.ExitCode == 0 {
		applied = truthOfApply(r.planted(false), r.appliedByPeople(), manifest, before, after)
		allowedOrphans = slices.Concat(meshAllowed(before), r.recordLeftOut(after, manifest), r.replacedDefaultsLeftOut(before, manifest), strandedByTheMove(before, after, manifest))
	} else if s.Kind == serverSideApply {
		allowedOrphans = meshAllowed(before)
	}
	allowedOrphans = append(allowedOrphans, r.appliedUnderItsName(s, before, effect)...)
	for _, g := range got {
		switch {
		case g.Rule == "orphaned-field" && (namesAny(g.Path, applied.orphans) || namesAny(g.Path, allowedOrphans)):
		case s.Kind == serverSideApply && res.ExitCode == 0 && r.staleCreationDefault(i, g, manifest, after):
		case g.Rule == "apply-reverts-drift" && namesAny(g.Path, applied.reverts):
		case g.Action == framework.Deny && mustPass:
			r.fail(i, "must-pass", falseDenial, "a write by %s that must pass was denied: %s", s.As, g.Line)
		case g.Action == framework.Deny && (g.Rule != "imperative-edit" || s.Kind == serverSideApply):
			r.fail(i, "denial-rule", falseDenial, "%s", g.Line)
		case g.Action == framework.Deny && !namesAny(g.Path, moves):
			r.fail(i, "denial-owned", falseDenial, "%s names no field of last-applied that the write moves away from it: %s", g.Path, g.Line)
		case g.Action == framework.Deny:
			r.putsBack(i, g, before, reapplied, moves)
		case g.Rule == "stale-last-applied" && undoing:
		case (g.Rule == "imperative-edit" || g.Rule == "server-side-owned") && !quiet && namesAny(g.Path, allowed):
		case restartArgoMayUndo(s, g, before):
		case s.Kind == serverSideApply && r.autoscaledTrue(g, manifest):
		case r.autoscaledTrue(g, manifestUnderItsName(s, before, effect)):
		default:
			r.fail(i, "finding-true", falseWarning, "%s", g.Line)
		}
	}
	if res.ExitCode == 0 && s.As.person() && !quiet && !undoing {
		rules := []string{"imperative-edit"}
		if s.Kind == serverSideApply {
			rules = append(rules, "server-side-owned")
		}
		if s.Kind == serverSideApply && movedToServerSide(before) {
			// The object moved to server-side apply: only Apply
			// entries record last-applied, no client-side applier,
			// and the team's next kubectl apply --server-side fails
			// on the conflict, loudly. Allowed, not required.
			moves = nil
		}
		for _, q := range moves {
			if s.Kind == serverSideApply && s.Manager == "" && migratedOnly(q, manifest, before, effect) {
				// Only kubectl's migration changed it (migratedOnly):
				// allowed, not required.
				continue
			}
			reported := slices.ContainsFunc(got, func(g framework.Reported) bool { return slices.Contains(rules, g.Rule) && names(g.Path, q) })
			if !reported && !r.countedLeftOut(rules[0]) && !r.countedLeftOut(rules[len(rules)-1]) {
				r.fail(i, "imperative-edit-reported", miss, "expected [%s] %s: %s moves it away from last-applied", rules[len(rules)-1], q, s.command())
			}
		}
	}
	if s.RewritesLastApplied && res.ExitCode == 0 {
		r.handOverRecorded(i, before, after)
	}
	if s.Kind == undo && res.ExitCode == 0 {
		for _, c := range repairBeyondProof(r.o.kind, before, after, r.applied) {
			r.fail(i, "repair-proves", falseWarning, "the undo's repair changed last-applied at %s beyond the restored template, or to a value no applied manifest had", c)
		}
	}
	if s.Kind == dryRunUndo {
		for _, c := range dryRunWrote(before, after) {
			r.fail(i, "dry-run-writes-nothing", "", "%s changed %s", s.command(), c)
		}
	}
}

// dryRunWrote lists what a server-side dry run of kubectl rollout undo
// changed of what the undo (and apply-hygiene's repair of it) would
// write: the pod template, and last-applied.
func dryRunWrote(before, after map[string]any) []string {
	var out []string
	if before == nil || after == nil {
		return nil
	}
	if !framework.SameAt(framework.TemplatePath, before, after) {
		out = append(out, framework.TemplatePath.String())
	}
	if !cmp.Equal(lastApplied(before), lastApplied(after)) {
		out = append(out, "metadata.annotations["+lastAppliedKey+"]")
	}
	return out
}

// putsBack checks, in the replay, that the next apply of last-applied
// puts the denied field back.
func (r *runner) putsBack(i int, g framework.Reported, before, reapplied map[string]any, moves []fieldPath) {
	la := lastApplied(before)
	for _, q := range moves {
		if names(g.Path, q) && !framework.SameAt(q, la, reapplied) {
			r.fail(i, "denial-puts-back", falseDenial, "the next apply does not put %s back to last-applied's value: %s", q, g.Line)
		}
	}
}

// ssaHeld are the fields a write changed away from the value that a
// server-side apply of the sequence applied there: the applier holds that
// value (Argo CD's, after kubectl's migration dropped last-applied), so an
// apply that discards it may say so, whoever first wrote the value.
func (r *runner) ssaHeld(before, after map[string]any) []fieldPath {
	return r.heldOf(before, changed(before, after))
}

// heldOf are the fields of qs whose value in before a server-side apply
// of the sequence applied.
func (r *runner) heldOf(before map[string]any, qs []fieldPath) []fieldPath {
	return appliedIn(r.ssa, before, qs)
}

// appliedIn are the fields of qs whose value in before one of manifests
// applied.
func appliedIn(manifests []map[string]any, before map[string]any, qs []fieldPath) []fieldPath {
	var out []fieldPath
	for _, q := range qs {
		for _, m := range manifests {
			if _, ok := q.Lookup(m); ok && framework.SameAt(q, m, before) {
				out = append(out, q)
				break
			}
		}
	}
	return out
}

// ssaChanged are the fields a write changed that a server-side apply of
// the sequence applied.
func (r *runner) ssaChanged(before, after map[string]any) []fieldPath {
	var out []fieldPath
	for _, q := range changed(before, after) {
		for _, m := range r.ssa {
			if _, ok := q.Lookup(m); ok {
				out = append(out, q)
				break
			}
		}
	}
	return out
}

// judgeFailure checks that a write that failed without a denial or a
// webhook error fails without the webhooks too: replayed in a namespace
// the webhooks ignore, it must fail as well.
func (r *runner) judgeFailure(i int, s step, before map[string]any) {
	if before == nil || s.Kind == remedy {
		return
	}
	if _, _, passed := r.replay(i, s, before, false); passed {
		r.fail(i, "fails-without-webhook", webhookError, "%s failed, and passes where the webhooks do not look", s.command())
	}
}

// restartedAt is the annotation kubectl rollout restart stamps.
var restartedAt = framework.Path("spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")

// restartArgoMayUndo reports whether g is server-side-owned's warning on a
// kubectl rollout restart of an object that Argo CD applies: allowed, not
// required. The warning claims two things the sequence can check: that
// Argo CD applies the object (argocd-controller has an entry in before's
// managedFields) and that the restart adds restartedAt, which Argo CD's
// manifest (its entry's fields) does not have. The rest ("with self-heal Argo CD syncs it
// away") is conditional advice about Argo CD's documented behaviour, for an
// Application setting that no sequence runs: the oracle can neither
// confirm nor refute it, so it neither counts the warning as false nor
// demands it (a sequence has no self-heal to prove a miss).
func restartArgoMayUndo(s step, g framework.Reported, before map[string]any) bool {
	if g.Rule != "server-side-owned" || g.Action == framework.Deny || len(s.Args) < 2 || s.Args[0] != "rollout" || s.Args[1] != "restart" ||
		!names(g.Path, restartedAt) || !strings.Contains(g.Line, "Argo CD") {
		return false
	}
	mfs, _ := framework.Path("metadata", "managedFields").Lookup(before)
	entries, _ := mfs.([]any)
	argo, gitHasIt := false, false
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if m["manager"] != "argocd-controller" {
			continue
		}
		argo = true
		fields, _ := json.Marshal(m["fieldsV1"])
		gitHasIt = gitHasIt || strings.Contains(string(fields), `"f:kubectl.kubernetes.io/restartedAt"`)
	}
	// What Argo CD applies is what Git has: its entry (unless kubectl's
	// migration gave it client-side apply's fields) or last-applied
	// (unless kubectl edit --save-config made it the whole object).
	_, inLastApplied := restartedAt.Lookup(lastApplied(before))
	return argo && (!gitHasIt || !inLastApplied)
}

// wholeOf reports whether reported names a field of before that encloses
// the orphan q and holds nothing but orphans (every field under it is one
// of orphans or inside one, or an empty value): merge reports a struct
// that holds only what people put in it as one orphan, the struct (a
// container's resources: {} that kubectl set resources filled, when no
// manager holds the empty struct), and its remove command removes exactly
// those orphans.
func wholeOf(reported string, q fieldPath, orphans []fieldPath, before map[string]any) bool {
	for k := len(q) - 1; k > 0; k-- {
		a := q[:k]
		if a.String() != reported {
			continue
		}
		v, ok := a.Lookup(before)
		return ok && onlyOrphans(a, v, orphans)
	}
	return false
}

// onlyOrphans reports whether the value v at p is one of orphans, inside
// one, or a map of which every field is (an empty one holds nothing).
func onlyOrphans(p fieldPath, v any, orphans []fieldPath) bool {
	if namesAny(p.String(), orphans) {
		return true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, c := range m {
		if !onlyOrphans(p.Key(k), c, orphans) {
			return false
		}
	}
	return true
}
