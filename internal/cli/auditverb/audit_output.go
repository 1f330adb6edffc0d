package auditverb

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/printers"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/cli"
)

// print writes the report: {"findings": [...]} for json and yaml (the
// same document), else a table of the findings followed by each message
// once.
func (o *Options) print(r *audit.Report) error {
	if o.Output == "json" || o.Output == "yaml" {
		return cli.PrintStructured(o.Out, o.Output, map[string]any{"findings": r.Findings})
	}
	if len(r.Findings) == 0 {
		_, err := fmt.Fprintf(o.Out, "No findings in %d objects.\n", r.Objects)
		return err
	}
	w := printers.GetNewTabWriter(o.Out)
	fmt.Fprintln(w, "NAMESPACE\tOBJECT\tRULE\tACTION\tPATH")
	for _, f := range r.Findings {
		ns := f.Object.Namespace
		if ns == "" {
			ns = "-"
		}
		fmt.Fprintf(w, "%s\t%s/%s\t%s\t%s\t%s\n", ns, f.Object.Kind, f.Object.Name, f.Rule, f.Action, f.Path)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(o.Out)
	seen := map[string]bool{}
	for _, f := range r.Findings {
		if seen[f.Message] {
			continue
		}
		seen[f.Message] = true
		if _, err := fmt.Fprintln(o.Out, f.Message); err != nil {
			return err
		}
	}
	return nil
}
