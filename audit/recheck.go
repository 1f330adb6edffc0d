package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

// Recheck reads the object of of again, analyzes and evaluates it as a
// scan does (same FixScope), and returns its fix as it is now, pinned to
// the resourceVersion just read, so that the API server refuses the write
// after any change in between. A fix writes only what the scan found and
// what still holds: ErrChanged when the object was replaced, or its fix
// now differs from of in any way (a controller took the field over, the
// undo was undone, a value changed, the fix went out of scope), ErrGone
// when it was deleted. Call it right before Fixer.Write or Preview.
func (s *Scanner) Recheck(ctx context.Context, of *ObjectFix) (*ObjectFix, error) {
	if of.Resource.Resource == "" {
		return nil, fmt.Errorf("rechecking %s %s: the fix names no resource", of.Object.Kind, objectName(of.Object))
	}
	var ri dynamic.ResourceInterface = s.client.Resource(of.Resource)
	if of.Object.Namespace != "" {
		ri = s.client.Resource(of.Resource).Namespace(of.Object.Namespace)
	}
	obj, err := ri.Get(ctx, of.Object.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, ErrGone
	case err != nil:
		return nil, fmt.Errorf("reading it again before the write: %w", err)
	}
	if of.UID != "" && obj.GetUID() != of.UID {
		return nil, ErrChanged
	}
	sc := &scan{Scanner: s, report: &Report{Namespaces: map[string]int{}}, labels: map[string]namespaceLabels{}}
	if !audited(obj) {
		return nil, ErrChanged
	}
	findings, err := sc.findings(ctx, of.Resource, obj)
	if err != nil {
		return nil, err
	}
	if len(sc.report.Errors) > 0 {
		return nil, fmt.Errorf("analyzing it again before the write: %w", sc.report.Errors[0].Err)
	}
	fixes, _, _ := PlanFixes(findings)
	if len(fixes) != 1 || !sameFix(of, fixes[0]) {
		return nil, ErrChanged
	}
	fresh := fixes[0]
	fresh.ResourceVersion = obj.GetResourceVersion()
	return fresh, nil
}

// freshRetries is how many times WriteFresh reads, rechecks and writes
// again after the API server refused a write only because the object
// moved on since the recheck.
const freshRetries = 3

// WriteFresh rechecks of (Recheck) and writes the fix as it is now with
// fixer, and returns what it wrote. When the write's tests fail (a write
// landed between the recheck's read and the patch: most often a
// controller's status update), it rechecks and writes again, up to
// freshRetries times, each time against what the scan found, so a change
// of what the fix relies on still ends with ErrChanged and nothing
// written; a status update alone no longer makes the fix fail. This is
// client-go's retry.RetryOnConflict, but the conflict here is a failed
// test of a JSON patch (which the API server answers as Invalid), not a
// 409.
func (s *Scanner) WriteFresh(ctx context.Context, fixer *Fixer, of *ObjectFix) (*ObjectFix, error) {
	refused := ""
	for attempt := 0; ; attempt++ {
		fresh, err := s.Recheck(ctx, of)
		if err != nil {
			return nil, err
		}
		if refused != "" && fresh.ResourceVersion == refused {
			// Refused, yet nothing moved: not a race but a refusal of
			// the patch itself (a policy that denies it as Invalid);
			// sending it again would be refused again.
			return nil, ErrChanged
		}
		err = fixer.Write(ctx, fresh)
		if errors.Is(err, ErrChanged) && attempt < freshRetries && ctx.Err() == nil {
			refused = fresh.ResourceVersion
			continue
		}
		return fresh, err
	}
}

// sameFix reports whether a and b fix the same findings with the same
// patch, resourceVersion aside, and write as the same field manager.
func sameFix(a, b *ObjectFix) bool {
	x, y := *a, *b
	x.ResourceVersion, y.ResourceVersion = "", ""
	px, errX := x.Patch()
	py, errY := y.Patch()
	if errX != nil || errY != nil || !bytes.Equal(px, py) || x.FieldManager() != y.FieldManager() {
		return false
	}
	fx, fy := x.Findings(), y.Findings()
	if len(fx) != len(fy) {
		return false
	}
	for i := range fx {
		if keyOf(fx[i]) != keyOf(fy[i]) {
			return false
		}
	}
	return true
}
