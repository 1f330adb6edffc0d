package auditverb

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/linediff"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// fixFieldManager is the field manager of audit --fix's writes.
const fixFieldManager = "kubectl-hygiene"

// fix carries out --fix on the report's findings: a dry run prints each
// object's change as a diff, --fix=apply writes it. It prints the
// findings left to a person, and returns an error naming the objects
// that were not fixed.
func (o *Options) fix(ctx context.Context, c *cluster.Cluster, scanner *audit.Scanner, r *audit.Report) error {
	fixes, notFixed, deferred := audit.PlanFixes(r.Findings)
	fixer := audit.NewFixer(c.Dynamic(), c.Mapper(), fixFieldManager)
	if o.Fix == fixApply && o.PauseBeforeWrite {
		fmt.Fprintln(o.ErrOut, "paused before writing: press Enter to go on")
		if _, err := bufio.NewReader(o.In).ReadString('\n'); err != nil {
			return fmt.Errorf("waiting before writing: %w", err)
		}
	}
	failed := 0
	for _, of := range fixes {
		// Read and analyze the object again right before the write: the
		// fix writes only what still holds, pinned to what this read.
		var err error
		if o.Fix == fixApply {
			err = o.writeFix(ctx, scanner, fixer, of)
		} else {
			var fresh *audit.ObjectFix
			if fresh, err = scanner.Recheck(ctx, of); err == nil {
				err = o.previewFix(ctx, fixer, fresh)
			}
		}
		if err != nil {
			failed++
			fmt.Fprintf(o.ErrOut, "error: %s was not fixed: %v\n", o.objectName(of.Object), audit.RedactError(of.Object, err))
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
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("%s of %d not fixed", cli.Plural(failed, "object"), len(fixes))}
	}
	return nil
}

func (o *Options) fixSummary(fixes, failed, notFixed int) {
	switch {
	case fixes == 0 && notFixed == 0:
		fmt.Fprintf(o.Out, "Nothing to fix.\n")
	case o.Fix == fixApply:
		fmt.Fprintf(o.Out, "%s fixed, %s left to you.\n", cli.Plural(fixes-failed, "object"), cli.Plural(notFixed, "finding"))
	default:
		fmt.Fprintf(o.Out, "Dry run: nothing was written; %s left to you. Write the fixes with --fix=apply.\n", cli.Plural(notFixed, "finding"))
	}
}

// writeFix patches the object as it is now (audit.Scanner.WriteFresh);
// the patch's tests make the API server refuse it when what the fix relies
// on changed since the audit.
func (o *Options) writeFix(ctx context.Context, scanner *audit.Scanner, fixer *audit.Fixer, of *audit.ObjectFix) error {
	fresh, err := scanner.WriteFresh(ctx, fixer, of)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.Out, "%s fixed: %s\n", o.objectName(fresh.Object), fresh.Summary()+managerNote(fixer, fresh))
	return err
}

// previewFix prints the object's change without writing it: the
// last-applied repair as a diff of the annotation's JSON, the removals as
// a diff of the object's YAML. It reads the object to show and check the
// removals against it as it is now.
func (o *Options) previewFix(ctx context.Context, fixer *audit.Fixer, of *audit.ObjectFix) error {
	live, fixed, err := fixer.Preview(ctx, of)
	if err != nil {
		return err
	}
	name := displayName(of.Object)
	out := fmt.Sprintf("%s fixed (dry run): %s\n", o.objectName(of.Object), of.Summary())
	if of.Repair != nil {
		from, err := prettyJSON(merge.RedactSecretJSON(of.Object.Kind, of.Repair.Fix.LastApplied))
		if err != nil {
			return err
		}
		repaired, _ := of.Repair.Fix.WritesLastApplied()
		to, err := prettyJSON(merge.RedactSecretJSON(of.Object.Kind, repaired))
		if err != nil {
			return err
		}
		out += linediff.Unified(name+" last-applied (live)", name+" last-applied (fixed)", from, to)
	}
	if len(of.Removals) > 0 {
		out += linediff.Unified(name+" (live)", name+" (fixed)", shownYAML(live), shownYAML(fixed))
	}
	_, err = fmt.Fprint(o.Out, out)
	return err
}

// shownYAML is the object's YAML as a diff shows it: a Secret's values
// redacted (merge.RedactSecret), without status,
// managedFields and last-applied (the repair shows that one on its own),
// and without empty maps, which the API server drops from built-in kinds
// (the annotations of a pod template whose last annotation goes).
func shownYAML(obj *unstructured.Unstructured) string {
	shown := &unstructured.Unstructured{Object: merge.RedactSecret(obj.DeepCopy().Object)}
	unstructured.RemoveNestedField(shown.Object, "status")
	unstructured.RemoveNestedField(shown.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(shown.Object, "metadata", "annotations", merge.LastAppliedAnnotation)
	raw, err := yaml.Marshal(merge.CopyWithout(shown.Object, isEmptyMap))
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

// isEmptyMap reports whether v is a map without entries.
func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}
