package generative_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// handoverOffer is what a denial offers: the kubectl hygiene handover
// command it ends with, as printed, the fields the command names, as the
// messages spell them, and the write it denied.
type handoverOffer struct {
	command string
	paths   []string
	denied  step
}

// handoverWith finds the hand-over command of a denial: at the end of
// [imperative-edit]'s ("… deleting it from last-applied first with:
// kubectl hygiene handover …", or "… deleting them from last-applied with:
// …" for a deployment tool's write), before [replicas-reset]'s ", then
// apply the manifest without it.".
var handoverWith = regexp.MustCompile(`from last-applied (?:first )?with: (kubectl hygiene handover .*?)(?:, then apply the manifest without it\.)?$`)

// offeredHandover is the hand-over that the denial among got offers for
// s, or nil: none, or one that names only the first of the fields (a
// person would have to hand the others over too).
func offeredHandover(s step, got []framework.Reported) *handoverOffer {
	for _, g := range got {
		if g.Action != framework.Deny {
			continue
		}
		m := handoverWith.FindStringSubmatch(g.Line)
		if m == nil || strings.Contains(m[1], " (it names the first ") {
			return nil
		}
		words, err := shellSplit(m[1])
		if err != nil || len(words) < 5 {
			return nil
		}
		o := &handoverOffer{command: m[1], denied: s}
		for j := 4; j < len(words); j++ {
			if words[j] == "-n" {
				j++
				continue
			}
			o.paths = append(o.paths, words[j])
		}
		return o
	}
	return nil
}

// runHandover runs, as the person, the hand-over that the previous step's
// denial offered, exactly as printed (the built plugin on PATH, as
// installed with krew), and judges it as the save-config it is: nothing
// moves away from last-applied, so nothing is denied or warned
// (judgeWrite), and it deletes the named fields from last-applied and
// writes nothing else (handoverProblems). Where two Update managers own
// last-applied it must refuse and write nothing (refusedForOwners). It
// reports whether it passed. A minimised sequence may have dropped the
// denial it follows: then it does nothing.
func (r *runner) runHandover(i int, s step) bool {
	o := r.offer
	r.offer = nil
	if o == nil || !slices.Equal(o.paths, s.HandsOver) {
		return false
	}
	words, _ := shellSplit(o.command) // offeredHandover split it
	k := r.as(alice)
	k.Namespace = "" // the command names it
	k.Env = append(slices.Clone(k.Env), "PATH="+filepath.Dir(framework.HygieneBinary(r.t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	before := r.get(r.f.Namespace)
	res := k.Run(r.t, words[1:]...)
	after := r.get(r.f.Namespace)
	r.t.Logf("STEP %d: %s, as %s: %s: exit %d", i+1, s.Writer, alice, o.command, res.ExitCode)
	if r.webhookErrors(i, res) {
		return false
	}
	owners := lastAppliedUpdaters(before)
	switch {
	case len(owners) > 1:
		r.judgeRefusal(i, o, owners, res, before, after)
		return false
	case res.ExitCode != 0 && strings.Contains(res.Stderr, "last-applied changed since it was read") && !cmp.Equal(lastApplied(before), lastApplied(after)):
		// Another writer (the periodic audit's repair) changed it
		// between the command's read and its write: the guard refuses.
		r.wrote["hand-overs refused: last-applied changed"]++
		return false
	case res.ExitCode != 0:
		r.fail(i, "handover-runs", wrongSelfWrite, "the hand-over that the denial of %s printed fails: %s: %s", o.denied.command(), o.command, strings.TrimSpace(res.Stderr))
		return false
	}
	r.wrote["hand-overs"]++
	wrote := step{Writer: s.Writer, As: alice, Args: words[1:], RewritesLastApplied: true}
	got, _ := framework.ParseOutput(r.described(), res.Stderr)
	r.judgeWrite(i, wrote, res, got, before, after)
	for _, problem := range handoverProblems(o.paths, r.hpa != nil, before, after) {
		r.fail(i, "handover-writes", wrongSelfWrite, "%s %s", o.command, problem)
	}
	// The write is last-applied's alone: an autoscaler's count or the
	// mesh injector's stamp in between is not the person's saved edit.
	r.record(wrote, before, withAnnotationsOf(before, after))
	r.recordMesh(before, after)
	return true
}

// judgeRefusal checks the hand-over's answer where several Update
// managers own last-applied: a write as one would take it from the
// others, so the command must refuse, naming them, and write nothing.
func (r *runner) judgeRefusal(i int, o *handoverOffer, owners []string, res framework.Result, before, after map[string]any) {
	want := "last-applied is owned by " + strings.Join(owners, " and ")
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, want) {
		r.fail(i, "handover-refuses", wrongSelfWrite, "%s with last-applied owned by %v: exit %d, want a refusal naming them: %s", o.command, owners, res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	if !cmp.Equal(lastApplied(before), lastApplied(after)) {
		r.fail(i, "handover-refuses", wrongSelfWrite, "%s with last-applied owned by %v changed last-applied", o.command, owners)
	}
	r.wrote["hand-overs refused: two owners"]++
}

// lastAppliedUpdaters are the managers of obj's Update entries of
// managedFields that own the last-applied annotation, sorted.
func lastAppliedUpdaters(obj map[string]any) []string {
	record := framework.Path("metadata", "annotations").Key(lastAppliedKey).String()
	var out []string
	for _, m := range entriesOf(obj) {
		manager, _ := m["manager"].(string)
		if m["operation"] == "Update" && entryOwns(m)[record] && !slices.Contains(out, manager) {
			out = append(out, manager)
		}
	}
	slices.Sort(out)
	return out
}

// withAnnotationsOf is before with after's annotations: what a write of
// annotations alone made of it.
func withAnnotationsOf(before, after map[string]any) map[string]any {
	out := runtime.DeepCopyJSON(before)
	annotations, _ := framework.Path("metadata", "annotations").Lookup(after)
	framework.EnsureMap(out, "metadata")["annotations"] = runtime.DeepCopyJSONValue(annotations)
	return out
}

// handoverProblems lists what a hand-over of paths wrote wrong: last-applied
// must lose each of them (with a map or list the deletion left empty) and
// nothing else, and no other field of the object may change (but the
// replicas an autoscaler keeps, and the mesh injector's stamp).
func handoverProblems(paths []string, autoscaled bool, before, after map[string]any) []string {
	covers := func(q fieldPath, p string) bool { return within(p, q.String()) }
	was, now := lastApplied(before), lastApplied(after)
	removed := framework.ChangedPaths(framework.Path(), was, now)
	var out []string
	for _, q := range removed {
		switch _, kept := q.Lookup(now); {
		case kept:
			out = append(out, fmt.Sprintf("changed %s in last-applied", q))
		case !slices.ContainsFunc(paths, func(p string) bool { return covers(q, p) }):
			out = append(out, fmt.Sprintf("deleted %s from last-applied, which it does not name", q))
		}
	}
	recorded := handoverRecord(after)
	for _, p := range paths {
		if !slices.ContainsFunc(removed, func(q fieldPath) bool { return covers(q, p) }) {
			out = append(out, fmt.Sprintf("left %s in last-applied", p))
		}
		if !handedOverIn(recorded, p) {
			out = append(out, fmt.Sprintf("did not record the hand-over of %s (%s)", p, handedOverKey))
		}
	}
	for _, q := range changed(before, after) {
		autoscalers := autoscaled && q.String() == "spec.replicas"
		if !meshStamped(q) && !autoscalers {
			out = append(out, fmt.Sprintf("changed %s", q))
		}
	}
	return out
}

// handedOverKey is the annotation in which kubectl hygiene handover
// records the fields it handed over (docs/cli.md).
const handedOverKey = "apply-hygiene.io/handed-over"

// handedOverOn reports whether obj records a hand-over (handedOverKey) of
// the field at key (kubectl notation), of a field that holds it or of one
// inside it: such a field is its new writer's, never an orphan. A write
// that replaced the object (kubectl replace, a re-creation) dropped the
// record, and with it the hand-over.
func handedOverOn(obj map[string]any, key string) bool {
	return handedOverIn(handoverRecord(obj), key)
}

// handoverRecord is the list of paths in obj's record of hand-overs
// (handedOverKey); none without one, or with one that is no JSON list
// of strings.
func handoverRecord(obj map[string]any) []string {
	raw, _ := framework.Path("metadata", "annotations").Key(handedOverKey).Lookup(obj)
	var record []string
	if s, ok := raw.(string); !ok || json.Unmarshal([]byte(s), &record) != nil {
		return nil
	}
	return record
}

// handedOverIn is handedOverOn for a record already read.
func handedOverIn(record []string, key string) bool {
	return slices.ContainsFunc(record, func(p string) bool { return within(key, p) || within(p, key) })
}

// within reports whether the field at inner (kubectl notation) is the one
// at outer or lies inside it.
func within(inner, outer string) bool {
	return inner == outer || strings.HasPrefix(inner, outer+".") || strings.HasPrefix(inner, outer+"[")
}

// handOverRecorded checks apply-hygiene's quiet record of a hand-over at
// a write that rewrote last-applied (kubectl apply edit-last-applied,
// set-last-applied): each entry the write added to the record
// (handedOverKey) must be a field that left last-applied and is still
// set; an entry beyond those fails the step as a wrong self-write. It
// reports whether the write added any. The generator writes no Secret's
// stringData, whose keys the record names as data.
func (r *runner) handOverRecorded(i int, before, after map[string]any) bool {
	was := handoverRecord(before)
	var added []string
	for _, p := range handoverRecord(after) {
		if !slices.Contains(was, p) {
			added = append(added, p)
		}
	}
	if len(added) == 0 {
		return false
	}
	now := lastApplied(after)
	var left []fieldPath
	for _, q := range framework.ChangedPaths(framework.Path(), lastApplied(before), now) {
		if _, kept := q.Lookup(now); !kept {
			left = append(left, q)
		}
	}
	for _, p := range added {
		handedOver := slices.ContainsFunc(left, func(q fieldPath) bool {
			_, set := q.Lookup(after)
			return set && within(p, q.String())
		})
		if !handedOver {
			r.fail(i, "handover-records", wrongSelfWrite, "the write's record of hand-overs lists %s, which the write did not take out of last-applied or which is not set", p)
		}
	}
	return true
}
