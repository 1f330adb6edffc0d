package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// fixFieldManager is the field manager of audit --fix's writes.
const fixFieldManager = "kubectl-hygiene"

// errChanged says that a fix's test operations failed: the object is not
// as the audit read it.
var errChanged = errors.New("it changed since the audit read it; nothing was written to it. Run the audit again to see it as it is now")

// fix carries out --fix on the report's findings: a dry run prints each
// object's change as a diff, --fix=apply writes it. It prints the
// findings left to a person, and returns an error naming the objects
// that were not fixed.
func (o *AuditOptions) fix(ctx context.Context, c *cluster, r *audit.Report) error {
	fixes, notFixed, deferred := planFixes(r.Findings)
	if o.Fix == fixApply && o.PauseBeforeWrite {
		fmt.Fprintln(o.ErrOut, "paused before writing: press Enter to go on")
		if _, err := bufio.NewReader(o.In).ReadString('\n'); err != nil {
			return fmt.Errorf("waiting before writing: %w", err)
		}
	}
	failed := 0
	for _, of := range fixes {
		var err error
		if o.Fix == fixApply {
			err = o.writeFix(ctx, c, of)
		} else {
			err = o.previewFix(ctx, c, of)
		}
		if err != nil {
			failed++
			fmt.Fprintf(o.ErrOut, "error: %s was not fixed: %v\n", o.objectName(of.ref), err)
		}
	}
	for _, f := range deferred {
		fmt.Fprintln(o.Out, deferredText(o.objectName(f.Object), f))
	}
	for _, f := range notFixed {
		fmt.Fprintln(o.Out, notFixedText(o.objectName(f.Object), f))
	}
	o.fixSummary(len(fixes), failed, len(notFixed)+len(deferred))
	if failed > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("%s of %d not fixed", plural(failed, "object"), len(fixes))}
	}
	return nil
}

func (o *AuditOptions) fixSummary(fixes, failed, notFixed int) {
	switch {
	case fixes == 0 && notFixed == 0:
		fmt.Fprintf(o.Out, "Nothing to fix.\n")
	case o.Fix == fixApply:
		fmt.Fprintf(o.Out, "%s fixed, %s left to you.\n", plural(fixes-failed, "object"), plural(notFixed, "finding"))
	default:
		fmt.Fprintf(o.Out, "Dry run: nothing was written; %s left to you. Write the fixes with --fix=apply.\n", plural(notFixed, "finding"))
	}
}

// writeFix patches the object; the patch's tests make the API server
// refuse it when the object changed since the audit.
func (o *AuditOptions) writeFix(ctx context.Context, c *cluster, of *objectFix) error {
	patch, err := of.patch()
	if err != nil {
		return err
	}
	ri, err := resourceOf(c, of.ref)
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, of.ref.Name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: fixFieldManager})
	switch {
	case apierrors.IsNotFound(err):
		return errors.New("it no longer exists")
	case patchRefused(err):
		return errChanged
	case err != nil:
		return fmt.Errorf("patching: %w", err)
	}
	_, err = fmt.Fprintf(o.Out, "%s fixed: %s\n", o.objectName(of.ref), of.summary())
	return err
}

// patchRefused reports whether the API server could not apply a JSON
// patch to the object (a test failed, a path is gone): a 422 without the
// causes that a validation error lists.
func patchRefused(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || len(d.Causes) == 0
}

// previewFix prints the object's change without writing it: the
// last-applied repair as a diff of the annotation's JSON, the removals as
// a diff of the object's YAML. It reads the object to show and check the
// removals against it as it is now.
func (o *AuditOptions) previewFix(ctx context.Context, c *cluster, of *objectFix) error {
	patch, err := of.patch()
	if err != nil {
		return err
	}
	ri, err := resourceOf(c, of.ref)
	if err != nil {
		return err
	}
	live, err := ri.Get(ctx, of.ref.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading it: %w", err)
	}
	fixed, err := applyPatch(live, patch)
	if err != nil {
		return err
	}
	name := displayName(of.ref)
	out := fmt.Sprintf("%s fixed (dry run): %s\n", o.objectName(of.ref), of.summary())
	if of.repair != nil {
		from, err := prettyJSON(of.repair.LastApplied)
		if err != nil {
			return err
		}
		to, err := prettyJSON(of.repair.Rollback.RepairedLastApplied)
		if err != nil {
			return err
		}
		out += unifiedDiff(name+" last-applied (live)", name+" last-applied (fixed)", from, to)
	}
	if len(of.removals) > 0 {
		out += unifiedDiff(name+" (live)", name+" (fixed)", shownYAML(live), shownYAML(fixed))
	}
	_, err = fmt.Fprint(o.Out, out)
	return err
}

// applyPatch applies a JSON patch to a copy of obj; errChanged when its
// tests fail.
func applyPatch(obj *unstructured.Unstructured, patch []byte) (*unstructured.Unstructured, error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, fmt.Errorf("decoding the patch: %w", err)
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding the object: %w", err)
	}
	patched, err := p.Apply(doc)
	if err != nil {
		return nil, errChanged
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(patched); err != nil {
		return nil, fmt.Errorf("decoding the fixed object: %w", err)
	}
	return out, nil
}

// shownYAML is the object's YAML as a diff shows it: without status,
// managedFields and last-applied (the repair shows that one on its own),
// and without empty maps, which the API server drops from built-in kinds
// (the annotations of a pod template whose last annotation goes).
func shownYAML(obj *unstructured.Unstructured) string {
	shown := obj.DeepCopy()
	unstructured.RemoveNestedField(shown.Object, "status")
	unstructured.RemoveNestedField(shown.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(shown.Object, "metadata", "annotations", merge.LastAppliedAnnotation)
	raw, err := yaml.Marshal(withoutEmptyMaps(shown.Object))
	if err != nil {
		return fmt.Sprintf("# cannot encode the object: %v\n", err)
	}
	return string(raw)
}

// prettyJSON indents a JSON document, as kubectl apply view-last-applied
// -o json.
func prettyJSON(s string) (string, error) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "", fmt.Errorf("decoding last-applied: %w", err)
	}
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding last-applied: %w", err)
	}
	return string(raw) + "\n", nil
}

// resourceOf is the client of the object's resource.
func resourceOf(c *cluster, ref merge.ObjectRef) (dynamic.ResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("parsing apiVersion %q: %w", ref.APIVersion, err)
	}
	mapping, err := c.mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", ref.Kind, err)
	}
	if ref.Namespace == "" {
		return c.dynamic.Resource(mapping.Resource), nil
	}
	return c.dynamic.Resource(mapping.Resource).Namespace(ref.Namespace), nil
}

// withoutEmptyMaps returns v without the map entries whose value is an
// empty map, at any depth.
func withoutEmptyMaps(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			x = withoutEmptyMaps(x)
			if m, ok := x.(map[string]any); ok && len(m) == 0 {
				continue
			}
			out[k] = x
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = withoutEmptyMaps(x)
		}
		return out
	}
	return v
}
