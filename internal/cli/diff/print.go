package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// print writes diff's outcome: each item's patch, the findings of the
// apply (what the webhooks will answer) and, under "kept", the findings
// of the objects the apply leaves unchanged (what explain finds in them:
// orphans and drift that stay). "kept" is left out when empty.
func (o *Options) print(items []entry, findings, kept []judge.Finding) error {
	for i := range items {
		redactItem(&items[i])
	}
	if o.Output != "" {
		doc := map[string]any{"items": items, "findings": findings}
		if len(items) == 1 {
			doc = map[string]any{"patch": items[0].Patch, "result": items[0].Result, "findings": findings}
		}
		if len(kept) > 0 {
			doc["kept"] = kept
		}
		return cli.PrintStructured(o.Out, o.Output, doc)
	}
	for _, item := range items {
		ref := item.Object
		switch {
		case item.Created:
			fmt.Fprintf(o.Out, "%s %s: would be created\n", ref.Kind, cli.ObjectName(ref))
		case len(item.Patch) == 0 || string(item.Patch) == "null":
			fmt.Fprintf(o.Out, "%s %s: no patch (analysis skipped)\n", ref.Kind, cli.ObjectName(ref))
		case string(item.Patch) == "{}":
			fmt.Fprintf(o.Out, "%s %s: unchanged (%s)\n", ref.Kind, cli.ObjectName(ref), item.Strategy)
			if err := printKept(o.Out, ref, kept); err != nil {
				return err
			}
		default:
			patch, err := yaml.JSONToYAML(item.Patch)
			if err != nil {
				return fmt.Errorf("encoding patch: %w", err)
			}
			fmt.Fprintf(o.Out, "%s %s: %s\n%s", ref.Kind, cli.ObjectName(ref), item.Strategy, indent(string(patch)))
		}
	}
	if len(findings) == 0 && len(kept) > 0 {
		// "No findings." would read as if the unchanged objects had none.
		_, err := fmt.Fprintln(o.Out, "No findings of the apply.")
		return err
	}
	return judge.PrintFindings(o.Out, findings, false)
}

// printKept writes, under an unchanged object's line, the findings
// explain makes on it (ref's among kept): kubectl apply sends nothing and
// they stay.
func printKept(w io.Writer, ref merge.ObjectRef, kept []judge.Finding) error {
	var own []judge.Finding
	for _, f := range kept {
		if f.Object == ref {
			own = append(own, f)
		}
	}
	if len(own) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w, "  kubectl apply sends no request; what stays (kubectl hygiene explain):"); err != nil {
		return err
	}
	for _, f := range own {
		if _, err := fmt.Fprintf(w, "  %s: %s\n", strings.ToUpper(f.Action), f.Message); err != nil {
			return err
		}
	}
	return nil
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "  " + strings.Join(lines, "\n  ") + "\n"
}

// redactItem hides a Secret's values in the patch and the result with
// merge's redaction: its data, its stringData and its last-applied
// annotation, which holds them too.
func redactItem(item *entry) {
	if !merge.IsSecret(item.Object.Kind) {
		return
	}
	if item.Result != nil {
		item.Result = &unstructured.Unstructured{Object: merge.RedactSecret(item.Result.DeepCopy().Object)}
	}
	var patch map[string]any
	if json.Unmarshal(item.Patch, &patch) == nil && patch != nil {
		if data, err := json.Marshal(merge.RedactSecretPatch(item.Object.Kind, patch)); err == nil {
			item.Patch = data
		}
	}
}
