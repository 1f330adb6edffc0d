package auditverb

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Values of --fix.
const (
	fixDryRun = "dry-run"
	fixApply  = "apply"
)

// notFixedText is the line of a finding that audit --fix leaves to a
// person, with the command its message names; name names its object.
func notFixedText(name string, f audit.Finding) string {
	s := fmt.Sprintf("%s not fixed: %s %s", name, f.Rule, f.Path)
	if f.NoFix != "" {
		s += " (" + f.NoFix + ")"
	}
	if f.Command != "" {
		return s + "; fix it with: " + f.Command
	}
	return s + "; see the message: " + f.Message
}

// managerNote names the field manager of a repair of last-applied, which
// writes as the manager that owns the annotation: "" for the others.
func managerNote(fixer *audit.Fixer, of *audit.ObjectFix) string {
	if of.FieldManager() == "" {
		return ""
	}
	return " (as field manager " + fixer.Manager(of) + ", which owns last-applied)"
}

// deferredText is the line of an orphan left for after the repair of its
// object's last-applied; name names its object.
func deferredText(name string, f audit.Finding) string {
	return fmt.Sprintf("%s not fixed yet: %s %s; last-applied is repaired first, run the audit again to see whether the field is still an orphan", name, f.Rule, f.Path)
}

// displayName names an object as kubectl does: deployment.apps/web.
func displayName(ref merge.ObjectRef) string {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	kind := strings.ToLower(ref.Kind)
	if err == nil && gv.Group != "" {
		kind += "." + gv.Group
	}
	return kind + "/" + ref.Name
}

// objectName is displayName, followed by the namespace when the audit
// scanned every namespace: "deployment.apps/web (namespace shop)".
func (o *Options) objectName(ref merge.ObjectRef) string {
	if o.AllNamespaces && ref.Namespace != "" {
		return displayName(ref) + " (namespace " + ref.Namespace + ")"
	}
	return displayName(ref)
}
