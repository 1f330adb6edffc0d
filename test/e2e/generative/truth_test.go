package generative_test

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The truth model: what a correct tool reports, from who did what in the
// sequence and the objects read around each step, never from what
// apply-hygiene says.

type fieldPath = framework.FieldPath

// lastAppliedKey is the annotation of client-side apply.
const lastAppliedKey = "kubectl.kubernetes.io/last-applied-configuration"

// bookkeeping are the annotations the controllers and kubectl keep for
// themselves; the truth model does not compare them.
var bookkeeping = map[string]bool{
	lastAppliedKey:                                    true,
	handedOverKey:                                     true,
	"deployment.kubernetes.io/revision":               true,
	"deployment.kubernetes.io/revision-history":       true,
	"deployment.kubernetes.io/desired-replicas":       true,
	"deployment.kubernetes.io/max-replicas":           true,
	"deprecated.daemonset.template.generation":        true,
	"autoscaling.alpha.kubernetes.io/conditions":      true,
	"autoscaling.alpha.kubernetes.io/current-metrics": true,
}

// relevant is the part of an object that writers set: everything but
// status and the metadata the server and the controllers keep, with the
// labels and the annotations but bookkeeping.
func relevant(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind", "status", "metadata":
		default:
			out[k] = v
		}
	}
	meta, _ := obj["metadata"].(map[string]any)
	if labels, ok := meta["labels"]; ok {
		out["metadata"] = map[string]any{"labels": labels}
	}
	if annotations, _ := meta["annotations"].(map[string]any); len(annotations) > 0 {
		kept := map[string]any{}
		for k, v := range annotations {
			if !bookkeeping[k] {
				kept[k] = v
			}
		}
		if len(kept) > 0 {
			m, _ := out["metadata"].(map[string]any)
			if m == nil {
				m = map[string]any{}
				out["metadata"] = m
			}
			m["annotations"] = kept
		}
	}
	return out
}

// changed lists the fields a step changed, added or removed, down to
// the keys of a map that one side does not have, as apply-hygiene's
// messages name them (an element of a named list stays whole).
func changed(before, after map[string]any) []fieldPath {
	a, b := relevant(before), relevant(after)
	var out []fieldPath
	for _, p := range framework.ChangedPaths(framework.Path(), a, b) {
		va, _ := p.Lookup(a)
		vb, _ := p.Lookup(b)
		out = append(out, leaves(p, va, vb)...)
	}
	return out
}

// leaves expands a path where a map was added or removed into the paths
// of its keys, and a list keyed by name into its elements; a list
// element stays whole.
func leaves(p fieldPath, a, b any) []fieldPath {
	if a == nil || b == nil {
		if named := elements(p, a, b); named != nil {
			return named
		}
	}
	ma, _ := a.(map[string]any)
	mb, _ := b.(map[string]any)
	whole := ma
	if whole == nil {
		whole = mb
	}
	if (a != nil && b != nil) || len(whole) == 0 || p.Element() {
		return []fieldPath{p}
	}
	keys := make([]string, 0, len(whole))
	for k := range whole {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []fieldPath
	for _, k := range keys {
		if a == nil {
			out = append(out, leaves(p.Key(k), nil, whole[k])...)
		} else {
			out = append(out, leaves(p.Key(k), whole[k], nil)...)
		}
	}
	return out
}

// lastApplied decodes the last-applied annotation of obj; nil when there
// is none or it is not JSON.
func lastApplied(obj map[string]any) map[string]any {
	v, _ := framework.Path("metadata", "annotations").Key(lastAppliedKey).Lookup(obj)
	s, _ := v.(string)
	var la map[string]any
	if json.Unmarshal([]byte(s), &la) != nil {
		return nil
	}
	return la
}

// ownedMoves are the fields a write moved away from last-applied: fields
// last-applied has whose value the write changed or removed so that live
// differs from last-applied there. A write that also rewrote last-applied
// (edit or replace with --save-config, an apply) moves none.
func ownedMoves(before, after map[string]any) []fieldPath {
	if !cmp.Equal(lastApplied(before), lastApplied(after)) {
		return nil
	}
	return movedFrom(before, after)
}

// movedFrom are the fields of before's last-applied whose value a write
// changed or removed so that after differs from last-applied there,
// whatever the write did to last-applied: kubectl apply --server-side
// drops it only in a second request, after its apply (kubectl's
// migration of client-side apply's fields), which the webhook reviews
// with last-applied still in place.
func movedFrom(before, after map[string]any) []fieldPath {
	la := lastApplied(before)
	if la == nil {
		return nil
	}
	var out []fieldPath
	for _, q := range changed(before, after) {
		if _, owned := q.Lookup(la); owned && !framework.SameAt(q, la, after) && !meshStamped(q) {
			out = append(out, q)
		}
	}
	return out
}

// migratedOnly reports whether q, a field that last-applied has, was
// changed by kubectl apply --server-side's migration alone (a step run by
// kubectl, not a client-go applier's) and not by the applied manifest: the manifest leaves q out, so the apply itself left it
// to its owner, client-side apply; kubectl then handed client-side apply's
// fields to the applier (csaupgrade) and applied again, which dropped q
// together with last-applied (removed, or put back by the server at its
// default: a Deployment's or StatefulSet's spec.replicas at 1). No request
// of the command changes q while a manager other than the applier still
// records last-applied: at the re-apply the applier's own entry holds
// last-applied, as it does for a tool that applied client-side under its
// own name, whose manifest the rules leave alone, and after it managedFields
// give q to nobody. A finding of q is allowed (its value did move away from
// last-applied's), not required (soak seed 271126, sequences 066 and 120:
// no [server-side-owned] at spec.replicas). A field the manifest sets to
// another value moved in the apply itself and stays required.
func migratedOnly(q fieldPath, manifest, before, after map[string]any) bool {
	_, inManifest := q.Lookup(manifest)
	return lastApplied(before) != nil && lastApplied(after) == nil && !inManifest
}

// undriftedBefore are the moves at fields where before had last-applied's
// value. A write under kubectl apply's name at a field that had already
// drifted from last-applied is what an apply of the same manifest does
// behind a mutating webhook that rewrites the field (kubectl's patch sets
// it, the webhook pins another value: docs/rules.md): nobody can tell
// the two apart, so only the fields it moved away from last-applied's
// value are its edits.
func undriftedBefore(moves []fieldPath, before map[string]any) []fieldPath {
	la := lastApplied(before)
	var out []fieldPath
	for _, q := range moves {
		if framework.SameAt(q, la, before) {
			out = append(out, q)
		}
	}
	return out
}

// applyTruth is what a correct tool reports for an apply.
type applyTruth struct {
	// orphans are the fields a person set outside apply that are live
	// after the apply and in neither the manifest nor last-applied.
	orphans []fieldPath
	// reverts are the fields a person set since the previous apply that
	// had drifted from last-applied and that the apply changed or
	// removed.
	reverts []fieldPath
}

// truthOfApply computes applyTruth for an apply of manifest that turned
// before into after, from the fields people set outside apply (planted)
// and those they applied server-side (applied: an applier owns them, so
// they are no orphans, but a client-side apply reverts them). A planted
// field that last-applied holds is no orphan while it does: an apply that
// had it in its manifest (or kubectl edit --save-config) took it over,
// but only through last-applied, and it is an orphan again once a write
// drops last-applied without removing it (kubectl apply --server-side's
// migration leaves the fields of kubectl label or patch, which never
// owned last-applied).
func truthOfApply(planted, applied []fieldPath, manifest, before, after map[string]any) applyTruth {
	la := lastApplied(before)
	var t applyTruth
	for _, p := range applied {
		if !framework.SameAt(p, before, la) && !framework.SameAt(p, before, after) {
			t.reverts = append(t.reverts, p)
		}
	}
	for _, p := range planted {
		_, live := p.Lookup(after)
		_, inManifest := p.Lookup(manifest)
		// The last-applied the write leaves: a client-side apply's is its
		// manifest, a failed or dry-run apply leaves before's, and
		// kubectl's server-side apply removes it when it migrates.
		_, inLastApplied := p.Lookup(lastApplied(after))
		// Replicas a manifest leaves out are handed to kubectl scale or
		// an autoscaler (docs/rules.md): never an orphan.
		// and spec.paused that kubectl rollout pause set is a pause, not
		// an orphan (issue 25).
		handedOver := p.String() == "spec.replicas" || p.String() == "spec.paused"
		if live && !inManifest && !inLastApplied && !handedOver {
			t.orphans = append(t.orphans, p)
		}
		drifted := !framework.SameAt(p, before, la)
		if drifted && !framework.SameAt(p, before, after) {
			t.reverts = append(t.reverts, p)
		}
	}
	return t
}

// names reports whether a path that a message names is the field q or a
// field inside it.
func names(reported string, q fieldPath) bool {
	s := q.String()
	return reported == s || strings.HasPrefix(reported, s+".") || strings.HasPrefix(reported, s+"[")
}

// namesAny reports whether reported names one of qs (names).
func namesAny(reported string, qs []fieldPath) bool {
	for _, q := range qs {
		if names(reported, q) {
			return true
		}
	}
	return false
}

// repairBeyondProof lists the fields where an undo's repair changed
// last-applied beyond what the undo restored: outside spec.template (and,
// for a Deployment, its annotations, which the undo copies from the
// ReplicaSet), or to a value that no manifest applied in the sequence had
// there: one a tool or a person set outside apply.
//
// But one: a Deployment's repair may write, at a field last-applied had
// before and still has, the value the undo restored there (the live
// value after the undo, which differs from the one before). A ReplicaSet
// keeps no manifest, and a revision whose value an allowed hand edit or a
// robot set (soak seed 271126, sequence 044) reaches the webhook exactly
// as one whose value an apply set: the repair records the revision the
// person chose, and kubectl's next three-way merge, which reads only the
// presence of a field in last-applied, is the same either way. Keeping
// last-applied's value instead makes every fix-forward apply after the
// undo warn that it sets the field back (docs/rules.md, stale-last-applied).
// A value that adds a key to last-applied's is no such case: the next
// apply deletes that key (restoredValue).
// A StatefulSet's or DaemonSet's revision keeps its manifest, so there
// the value must be a manifest's.
func repairBeyondProof(kind string, before, after map[string]any, applied []map[string]any) []fieldPath {
	la := lastApplied(after)
	var out []fieldPath
	for _, c := range framework.ChangedPaths(framework.Path(), lastApplied(before), la) {
		s := c.String()
		restored := strings.HasPrefix(s, "spec.template.") ||
			(kind == "Deployment" && strings.HasPrefix(s, "metadata.annotations"))
		proven := kind == "Deployment" && (restoredValue(c, before, after) || restampedStamp(c, before, after))
		for _, m := range applied {
			proven = proven || framework.SameAt(c, m, la)
		}
		if !restored || !proven {
			out = append(out, c)
		}
	}
	return out
}

// restoredValue reports whether last-applied had a value at c before the
// undo and has, after it, the value the undo restored at c in the live
// object, with no map key that the value before lacked: kubectl's next
// apply deletes the keys of last-applied that its manifest lacks, inside
// any map (a person's nodeSelector entry that the repair wrote would go).
func restoredValue(c fieldPath, before, after map[string]any) bool {
	was, had := c.Lookup(lastApplied(before))
	is, has := c.Lookup(lastApplied(after))
	return had && has && framework.SameAt(c, after, lastApplied(after)) && !framework.SameAt(c, before, after) && noNewKey(is, was)
}

// restampedStamp reports whether c is the mesh injector's stamp and
// last-applied had it before the undo and has it after: kubectl's undo of
// a Deployment copies the ReplicaSet's annotations, the stamp among them,
// and the repair records that value as any restored one (restoredValue),
// but the injector, called after apply-hygiene's webhook, stamps the same
// write again, so the live value after the undo is never the one the
// repair saw (soak seed 271126, sequence 049). The next apply deletes the
// stamp from last-applied's key either way.
func restampedStamp(c fieldPath, before, after map[string]any) bool {
	_, had := c.Lookup(lastApplied(before))
	_, has := c.Lookup(lastApplied(after))
	return meshStamped(c) && had && has
}

// noNewKey reports whether every map key in v, at any depth, is in w at
// the same place (list elements by position).
func noNewKey(v, w any) bool {
	switch x := v.(type) {
	case map[string]any:
		y, _ := w.(map[string]any)
		for k, e := range x {
			f, ok := y[k]
			if !ok || !noNewKey(e, f) {
				return false
			}
		}
	case []any:
		y, _ := w.([]any)
		for i, e := range x {
			var f any
			if i < len(y) {
				f = y[i]
			}
			if _, isMap := e.(map[string]any); isMap && !noNewKey(e, f) {
				return false
			}
		}
	}
	return true
}

// elements are the paths of the elements of a list keyed by name that
// one side has and the other does not; nil for any other value.
func elements(p fieldPath, a, b any) []fieldPath {
	list, _ := a.([]any)
	if list == nil {
		list, _ = b.([]any)
	}
	var out []fieldPath
	for _, item := range list {
		m, _ := item.(map[string]any)
		name, ok := m["name"].(string)
		if !ok {
			return nil
		}
		out = append(out, p.Named(name))
	}
	return out
}
