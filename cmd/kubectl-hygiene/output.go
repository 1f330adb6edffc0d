package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// print writes diff's outcome: each item's patch, the findings of the
// apply (what the webhooks will answer) and, under "kept", the findings
// of the objects the apply leaves unchanged (what explain finds in them:
// orphans and drift that stay). "kept" is left out when empty.
func (o *DiffOptions) print(items []diffItem, findings, kept []judge.Finding) error {
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

func (o *ExplainOptions) print(items []explainItem, findings []judge.Finding) error {
	if o.Output != "" {
		if len(items) == 1 {
			return cli.PrintStructured(o.Out, o.Output, map[string]any{"object": items[0].Object,
				"lastApplied": items[0].LastApplied, "fields": items[0].Fields, "findings": findings})
		}
		return cli.PrintStructured(o.Out, o.Output, map[string]any{"items": items, "findings": findings})
	}
	for _, item := range items {
		fmt.Fprintf(o.Out, "%s %s (last-applied: %s)\n", item.Object.Kind, cli.ObjectName(item.Object), item.LastApplied.Status)
		w := printers.GetNewTabWriter(o.Out)
		fmt.Fprintln(w, "PATH\tVALUE\tOWNERS\tSTATUS")
		for _, f := range item.Fields {
			// STATUS is the last column: its color codes do not upset the
			// alignment.
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", f.Path, value(f.Value), ownerNames(f.Owners), cli.Colored(o.color, statusColor(f), status(f)))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return judge.PrintFindings(o.Out, findings, o.color)
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

func statusColor(f merge.FieldInfo) string {
	switch {
	case f.Drift:
		return cli.ColorRed
	case f.Orphan:
		return cli.ColorYellow
	}
	return ""
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "  " + strings.Join(lines, "\n  ") + "\n"
}

func ownerNames(owners []merge.Owner) string {
	if len(owners) == 0 {
		return "-"
	}
	names := make([]string, len(owners))
	for i, o := range owners {
		names[i] = o.Manager
	}
	return strings.Join(names, ",")
}

func status(f merge.FieldInfo) string {
	var s []string
	for _, x := range []struct {
		on   bool
		name string
	}{{f.LastApplied, "last-applied"}, {f.Default, "default"}, {f.Drift, "drift"}, {f.Orphan, "orphan"}} {
		if x.on {
			s = append(s, x.name)
		}
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// redactItem hides a Secret's values in the patch and the result with
// merge's redaction: its data, its stringData and its last-applied
// annotation, which holds them too.
func redactItem(item *diffItem) {
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

// maxMessageValue is the length at which values in explain's table are
// cut.
const maxMessageValue = 80

// value renders a field value for explain's table: compact JSON, cut;
// "nothing" when absent.
func value(v any) string {
	if v == nil {
		return "nothing"
	}
	// Without HTML escaping: a Secret's "<redacted>" reads as written.
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSuffix(buf.String(), "\n")
	if len(s) > maxMessageValue {
		s = strings.ToValidUTF8(s[:maxMessageValue], "") + "…"
	}
	return s
}
