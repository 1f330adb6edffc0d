package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Rule IDs (design.md section 4).
const (
	ruleImperativeEdit     = "imperative-edit"
	ruleRevert             = "apply-reverts-drift"
	ruleOrphan             = "orphaned-field"
	ruleStale              = "stale-last-applied"
	ruleDefaultedDependent = "defaulted-dependent"
	ruleReplicasReset      = "replicas-reset"
	ruleMissing            = "missing-last-applied"
	ruleInvalid            = "invalid-last-applied"
	ruleTooLarge           = "last-applied-too-large"
)

// Actions.
const (
	actionDeny   = "deny"
	actionWarn   = "warn"
	actionRepair = "repair"
)

// lastAppliedPath is where findings about the annotation itself point.
const lastAppliedPath = "metadata.annotations[" + merge.LastAppliedAnnotation + "]"

// Finding is one rule hit, as every command prints it (design.md section 7).
// Action is the rule's default action until policies decide.
type Finding struct {
	Rule    string          `json:"rule"`
	Action  string          `json:"action"`
	Path    string          `json:"path"`
	Message string          `json:"message"`
	Object  merge.ObjectRef `json:"object"`
	// Owners are the field managers of the field, newest first.
	Owners []string `json:"owners,omitempty"`
}

// findingsFor turns an analysis into findings. result is the object after
// the write (nil when unknown); manifestFile names the manifest in commands.
func findingsFor(an *merge.Analysis, result *unstructured.Unstructured, manifestFile string) []Finding {
	r := reporter{ref: an.Object, result: result, manifestFile: manifestFile}
	out := r.lastApplied(an)
	for _, f := range an.Drift {
		out = append(out, r.drift(f))
	}
	for _, f := range an.ImperativeChanges {
		out = append(out, r.imperative(f))
	}
	for _, f := range an.Reverts {
		out = append(out, r.revert(f))
	}
	if an.ReplicasReset != nil {
		out = append(out, r.replicasReset(*an.ReplicasReset))
	}
	for _, f := range an.DefaultedDependents {
		out = append(out, r.dependent(f))
	}
	for _, f := range an.Orphans {
		out = append(out, r.orphan(f, an.Operation))
	}
	if an.Rollback != nil && an.Rollback.StaleLastApplied {
		out = append(out, r.stale(an.Rollback))
	}
	return out
}

// reporter writes the messages for one object.
type reporter struct {
	ref          merge.ObjectRef
	result       *unstructured.Unstructured
	manifestFile string
}

func (r reporter) finding(rule, action, path string, owners []merge.Owner, format string, args ...any) Finding {
	f := Finding{Rule: rule, Action: action, Path: path, Object: r.ref,
		Message: fmt.Sprintf("[%s] %s: ", rule, r.name()) + fmt.Sprintf(format, args...)}
	for _, o := range owners {
		f.Owners = append(f.Owners, o.Manager)
	}
	return f
}

func (r reporter) name() string {
	if r.ref.Namespace == "" {
		return r.ref.Kind + " " + r.ref.Name
	}
	return r.ref.Kind + " " + r.ref.Namespace + "/" + r.ref.Name
}

// resource is the object as kubectl arguments: "statefulset.apps/web -n ns".
func (r reporter) resource() string {
	res := strings.ToLower(r.ref.Kind)
	if group, _, ok := strings.Cut(r.ref.APIVersion, "/"); ok {
		res += "." + group
	}
	res += "/" + r.ref.Name
	if r.ref.Namespace != "" {
		res += " -n " + r.ref.Namespace
	}
	return res
}

func (r reporter) lastApplied(an *merge.Analysis) []Finding {
	var out []Finding
	switch an.LastApplied.Status {
	case merge.LastAppliedMissing:
		what := "this apply cannot delete any field the manifest drops; kubectl apply adds the annotation now"
		if an.Operation != "apply" {
			what = "kubectl apply cannot delete any field from it. Record the manifest first: kubectl apply set-last-applied -f " +
				r.manifest() + " --create-annotation"
		}
		out = append(out, r.finding(ruleMissing, actionWarn, lastAppliedPath, nil,
			"no %s annotation (made by kubectl create or replace?): %s.", merge.LastAppliedAnnotation, what))
	case merge.LastAppliedInvalid:
		out = append(out, r.finding(ruleInvalid, actionWarn, lastAppliedPath, nil,
			"%s; analysis skipped. Rewrite it: kubectl apply set-last-applied -f %s", an.LastApplied.Error, r.manifest()))
	}
	if an.LastAppliedTooLarge {
		out = append(out, r.finding(ruleTooLarge, actionWarn, "metadata.annotations", nil,
			"annotations take %d bytes, over 80%% of the %d-byte limit. Use kubectl apply --server-side, which keeps no last-applied.",
			an.AnnotationsBytes, merge.AnnotationsLimit))
	}
	return out
}

func (r reporter) manifest() string {
	if r.manifestFile == "" {
		return "MANIFEST"
	}
	return r.manifestFile
}

func (r reporter) drift(f merge.FieldFact) Finding {
	return r.finding(ruleRevert, actionWarn, f.Path.String(), f.Owners,
		"%s is %s live but %s in last-applied%s; the next kubectl apply of the same manifest puts %s back. To keep the live value, put it in the manifest.",
		f.Path, value(f.Live), value(f.LastApplied), ownerPhrase(", changed by", f.Owners), value(f.LastApplied))
}

func (r reporter) imperative(f merge.FieldFact) Finding {
	return r.finding(ruleImperativeEdit, actionDeny, f.Path.String(), f.Owners,
		"%s is owned by kubectl apply (last-applied has %s); this write makes it %s, and the next apply silently reverts it. Change the manifest and apply it instead.",
		f.Path, value(f.LastApplied), value(f.Result))
}

func (r reporter) revert(f merge.FieldFact) Finding {
	return r.finding(ruleRevert, actionWarn, f.Path.String(), f.Owners,
		"kubectl apply changes %s from %s to %s, overwriting a change made since the last apply (last-applied has %s%s). To keep the live value, put it in the manifest.",
		f.Path, value(f.Live), value(f.Result), value(f.LastApplied), changedBy(f.Owners))
}

func (r reporter) replicasReset(f merge.FieldFact) Finding {
	action := actionDeny
	if live, ok := f.Live.(float64); ok && live == 1 {
		action = actionWarn
	}
	return r.finding(ruleReplicasReset, action, f.Path.String(), nil,
		"the manifest drops spec.replicas, which last-applied set to %s: kubectl apply deletes it and the server resets it to 1 (live: %s). Hand it over first: kubectl apply edit-last-applied %s (remove spec.replicas), then apply.",
		value(f.LastApplied), value(f.Live), r.resource())
}

func (r reporter) dependent(f merge.FieldFact) Finding {
	consequence := "and is stale"
	if f.Rejected {
		consequence = "and the API server rejects the object"
	}
	parent, _, _ := strings.Cut(f.Path.String(), "."+lastElement(f.Path))
	return r.finding(ruleDefaultedDependent, actionRepair, f.Path.String(), f.Owners,
		"%s becomes %s but the server-defaulted %s (%s) stays, %s. Add %q under %s in the manifest.",
		f.DependsOn, value(lookupString(r.result, f.DependsOn)), f.Path, value(f.Result), consequence, lastElement(f.Path)+": null", parent)
}

func (r reporter) orphan(f merge.FieldFact, operation string) Finding {
	what, when := "is in neither the manifest nor last-applied, so kubectl apply keeps it", "after the apply"
	if operation != "apply" {
		what, when = "is not in last-applied, so kubectl apply keeps it unless the manifest sets it", "now"
	}
	return r.finding(ruleOrphan, actionWarn, f.Path.String(), f.Owners, "%s (%s) %s%s. %s",
		f.Path, value(f.Result), what, setBy(f.Owners), r.removeCommand(f.Path, when))
}

func (r reporter) stale(rb *merge.Rollback) Finding {
	return r.finding(ruleStale, actionRepair, lastAppliedPath, nil,
		"rollout undo restored %s %s (revision %d) but kept the last-applied of the newer manifest; the next apply computes deletions against the wrong manifest.",
		rb.RevisionKind, rb.RevisionName, rb.Revision)
}

// removeCommand is a kubectl patch that removes p from the result, guarded
// by test operations on the keys of the list elements on the way.
func (r reporter) removeCommand(p merge.Path, when string) string {
	if r.result == nil {
		return ""
	}
	var ops []map[string]any
	for i, pe := range p {
		if pe.Key == nil {
			continue
		}
		ptr, ok := merge.JSONPointer(r.result.Object, p[:i+1])
		if !ok {
			return ""
		}
		for _, k := range *pe.Key {
			ops = append(ops, map[string]any{"op": "test", "path": ptr + "/" + k.Name, "value": k.Value.Unstructured()})
		}
	}
	ptr, ok := merge.JSONPointer(r.result.Object, p)
	if !ok {
		return ""
	}
	ops = append(ops, map[string]any{"op": "remove", "path": ptr})
	data, err := json.Marshal(ops)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("Remove it %s: kubectl patch %s --type=json -p '%s'", when, r.resource(), data)
}

func lastElement(p merge.Path) string {
	s := p.String()
	if i := strings.LastIndexAny(s, ".["); i >= 0 {
		return strings.TrimSuffix(strings.TrimPrefix(s[i:], "."), "]")
	}
	return s
}

func lookupString(obj *unstructured.Unstructured, p merge.Path) any {
	if obj == nil || len(p) == 0 {
		return nil
	}
	fields := make([]string, 0, len(p))
	for _, pe := range p {
		if pe.FieldName == nil {
			return nil
		}
		fields = append(fields, *pe.FieldName)
	}
	v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	return v
}

// maxMessageValue is the length at which values in messages are cut.
const maxMessageValue = 80

// value renders a fact value for a message: compact JSON, cut; "nothing"
// when absent.
func value(v any) string {
	if v == nil {
		return "nothing"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if len(s) > maxMessageValue {
		s = strings.ToValidUTF8(s[:maxMessageValue], "") + "…"
	}
	return s
}

func changedBy(owners []merge.Owner) string {
	return ownerPhrase("; changed by", owners)
}

func setBy(owners []merge.Owner) string {
	return ownerPhrase("; set by", owners)
}

func ownerPhrase(prefix string, owners []merge.Owner) string {
	if len(owners) == 0 {
		return ""
	}
	o := owners[0]
	s := prefix + " " + o.Manager
	if o.Subresource != "" {
		s += " (" + o.Subresource + ")"
	}
	if !o.Time.IsZero() {
		s += " at " + o.Time.UTC().Format(time.RFC3339)
	}
	return s
}
