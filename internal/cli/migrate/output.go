package migrate

import (
	"fmt"
	"io"
	"strings"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
)

// migrateReport is what `kubectl hygiene migrate -o json` prints.
type migrateReport struct {
	// DryRun is set with --dry-run: nothing was written.
	DryRun bool `json:"dryRun"`
	// FieldManager is the server-side apply manager that takes over.
	FieldManager string `json:"fieldManager"`
	// Objects are the objects that client-side apply manages, in the
	// order they were listed.
	Objects []migration `json:"objects"`
}

// outcome is the error that sets the exit status: 1 when an object could
// not be migrated.
func (r migrateReport) outcome() error {
	failed := 0
	for _, m := range r.Objects {
		if m.Error != "" {
			failed++
		}
	}
	if failed == 0 {
		return nil
	}
	return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("%d object(s) could not be migrated", failed)}
}

func (o *Options) print(r migrateReport) error {
	if o.Output != "" {
		return cli.PrintStructured(o.Out, o.Output, r)
	}
	if len(r.Objects) == 0 {
		_, err := fmt.Fprintln(o.Out, "No objects managed by client-side apply.")
		return err
	}
	for _, m := range r.Objects {
		printMigration(o.Out, r, m)
	}
	_, err := fmt.Fprintln(o.Out, summary(r))
	return err
}

// printMigration writes the block of one object.
func printMigration(w io.Writer, r migrateReport, m migration) {
	if len(m.Managers) == 0 {
		fmt.Fprintf(w, "%s %s: no client-side apply manager left, only the last-applied annotation\n", m.Object.Kind, cli.ObjectName(m.Object))
	} else {
		fmt.Fprintf(w, "%s %s: client-side apply by %s\n", m.Object.Kind, cli.ObjectName(m.Object), strings.Join(m.Managers, ", "))
		printFields(w, m.Fields)
	}
	dry := ""
	if r.DryRun {
		dry = " (dry run)"
	}
	switch m.Upgrade {
	case upgradeDone, upgradeDryRun:
		fmt.Fprintf(w, "  %s: their fields %s to %s (Apply), whose next server-side apply deletes those its manifest drops%s\n", m.Upgrade, belong(r.DryRun), r.FieldManager, dry)
	case upgradeFailed:
		fmt.Fprintf(w, "  failed: %s\n", m.Error)
	}
	switch {
	case m.LastApplied == "kept" && m.Upgrade == upgradeFailed:
		fmt.Fprintln(w, "  last-applied: kept")
	case m.LastApplied == "kept" && len(m.Managers) == 0:
		// --drop-last-applied drops it only after an upgrade.
		fmt.Fprintf(w, "  last-applied: kept; server-side apply does not need it: drop it with kubectl annotate %s %s-\n",
			annotateTarget(m), lastAppliedArg)
	case m.LastApplied == "kept":
		fmt.Fprintf(w, "  last-applied: kept; server-side apply does not need it: drop it with --drop-last-applied, or kubectl annotate %s %s-\n",
			annotateTarget(m), lastAppliedArg)
	case m.LastApplied == "dropped" || m.LastApplied == "would be dropped":
		fmt.Fprintf(w, "  last-applied: %s%s\n", m.LastApplied, dry)
	}
	if m.Upgrade != upgradeFailed && m.Error != "" {
		fmt.Fprintf(w, "  failed: %s\n", m.Error)
	}
}

// lastAppliedArg is the annotation as `kubectl annotate` names it.
const lastAppliedArg = "kubectl.kubernetes.io/last-applied-configuration"

// printFields lists the fields the manifest set, counts the server
// defaults, which -o json lists, and lists the fields that stay with
// client-side apply.
func printFields(w io.Writer, fields []strandedField) {
	defaults := 0
	var set, stay []strandedField
	for _, f := range fields {
		switch {
		case f.Default:
			defaults++
		case f.Stays:
			stay = append(stay, f)
		default:
			set = append(set, f)
		}
	}
	if len(set) > 0 {
		fmt.Fprintln(w, "  fields it owns, which a server-side apply that drops them leaves behind unless upgraded:")
		for _, f := range set {
			fmt.Fprintf(w, "    %s\n", f.Path)
		}
	}
	if defaults > 0 {
		fmt.Fprintf(w, "  and %d field(s) the server defaulted (a manifest that leaves them out gets the default again; -o json lists them)\n", defaults)
	}
	if len(stay) > 0 {
		fmt.Fprintln(w, "  fields that stay with client-side apply, as neither last-applied nor the server's defaults have them (the new manager's apply would delete them):")
		for _, f := range stay {
			fmt.Fprintf(w, "    %s\n", f.Path)
		}
	}
}

// annotateTarget names the object for kubectl annotate.
func annotateTarget(m migration) string {
	kind := strings.ToLower(m.Object.Kind)
	if m.gvr.Group != "" {
		kind += "." + m.gvr.Group
	}
	s := kind + "/" + m.Object.Name
	if m.Object.Namespace != "" {
		s += " -n " + m.Object.Namespace
	}
	return s
}

// summary counts the objects by outcome.
func summary(r migrateReport) string {
	var upgraded, none, failed int
	for _, m := range r.Objects {
		switch {
		case m.Error != "":
			failed++
		case m.Upgrade == upgradeNone:
			none++
		default:
			upgraded++
		}
	}
	verb := "upgraded"
	if r.DryRun {
		verb = "would be upgraded (dry run: nothing was written)"
	}
	return fmt.Sprintf("%d object(s) %s, %d with nothing to upgrade, %d failed.", upgraded, verb, none, failed)
}

func belong(dryRun bool) string {
	if dryRun {
		return "would belong"
	}
	return "now belong"
}
