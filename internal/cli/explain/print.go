package explain

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/judge"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// print writes the items' fields as a table per object, then the
// findings; with -o json|yaml, one document.
func (o *Options) print(items []item, findings []judge.Finding) error {
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

func statusColor(f merge.FieldInfo) string {
	switch {
	case f.Drift:
		return cli.ColorRed
	case f.Orphan:
		return cli.ColorYellow
	}
	return ""
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
