package generative_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

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
// writes nothing else (handoverProblems). It reports whether it passed.
// A minimised sequence may have dropped the denial: then it does nothing.
func (r *runner) runHandover(i int, s step) bool {
	o := r.offer
	r.offer = nil
	if o == nil {
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
	if res.ExitCode != 0 {
		r.fail(i, "handover-runs", falseDenial, "the hand-over that the denial of %s printed fails: %s: %s", o.denied.command(), o.command, strings.TrimSpace(res.Stderr))
		return false
	}
	wrote := step{Writer: s.Writer, As: alice, Args: words[1:], RewritesLastApplied: true}
	got, _ := framework.ParseOutput(r.described(), res.Stderr)
	r.judgeWrite(i, wrote, res, got, before, after)
	for _, problem := range handoverProblems(o.paths, r.hpa != nil, before, after) {
		r.fail(i, "handover-writes", wrongSelfWrite, "%s %s", o.command, problem)
	}
	r.record(wrote, before, after)
	return true
}

// handoverProblems lists what a hand-over of paths wrote wrong: last-applied
// must lose each of them (with a map or list the deletion left empty) and
// nothing else, and no other field of the object may change (but the
// replicas an autoscaler keeps, and the mesh injector's stamp).
func handoverProblems(paths []string, autoscaled bool, before, after map[string]any) []string {
	covers := func(q fieldPath, p string) bool {
		s := q.String()
		return p == s || strings.HasPrefix(p, s+".") || strings.HasPrefix(p, s+"[")
	}
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
	for _, p := range paths {
		if !slices.ContainsFunc(removed, func(q fieldPath) bool { return covers(q, p) }) {
			out = append(out, fmt.Sprintf("left %s in last-applied", p))
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
