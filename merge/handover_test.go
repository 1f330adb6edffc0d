package merge

import (
	"testing"
)

// OwnershipHandedOver tells a write that moves fields from one manager's
// entry to another's (csaupgrade, kubectl hygiene migrate) from the
// managedFields changes of an apply.
func TestOwnershipHandedOver(t *testing.T) {
	const (
		csaAll     = `{"manager":"kubectl-client-side-apply","operation":"Update","fieldsV1":{"f:data":{"f:token":{},"f:user":{}}}}`
		csaUser    = `{"manager":"kubectl-client-side-apply","operation":"Update","fieldsV1":{"f:data":{"f:user":{}}}}`
		robot      = `{"manager":"kubectl-patch","operation":"Update","fieldsV1":{"f:data":{"f:token":{}}}}`
		applyAll   = `{"manager":"kubectl","operation":"Apply","fieldsV1":{"f:data":{"f:token":{},"f:user":{}}}}`
		applyUser  = `{"manager":"kubectl","operation":"Apply","fieldsV1":{"f:data":{"f:user":{}}}}`
		applyToken = `{"manager":"kubectl","operation":"Apply","fieldsV1":{"f:data":{"f:token":{}}}}`
	)
	tests := map[string]struct {
		old, new []string
		want     bool
	}{
		"csaupgrade moves client-side apply's fields to an Apply entry": {
			old: []string{csaAll}, new: []string{applyAll}, want: true,
		},
		"migrate moves what client-side apply still owns, beside a robot's field": {
			old: []string{csaUser, robot}, new: []string{applyUser, robot}, want: true,
		},
		"a server-side apply of the same values shares the fields": {
			old: []string{csaAll}, new: []string{csaAll, applyAll},
		},
		"a server-side apply that drops a field another manager owns too gives it up": {
			old: []string{applyAll, robot}, new: []string{applyUser, robot},
		},
		"a first server-side apply adds its entry": {
			old: []string{robot}, new: []string{robot, applyUser},
		},
		"a take-over on a conflict moves a field whose value changes": {
			old: []string{csaUser, robot}, new: []string{csaUser, applyToken}, want: true,
		},
		"nothing changed": {
			old: []string{csaAll, robot}, new: []string{csaAll, robot},
		},
		"managedFields reset": {
			old: []string{csaAll}, new: []string{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := func(entries []string) string {
				out := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","managedFields":[`
				for i, e := range entries {
					if i > 0 {
						out += ","
					}
					out += e
				}
				return out + `]}}`
			}
			if got := OwnershipHandedOver(mustObject(t, obj(tc.old)), mustObject(t, obj(tc.new))); got != tc.want {
				t.Errorf("OwnershipHandedOver = %v, want %v", got, tc.want)
			}
		})
	}
	if OwnershipHandedOver(mustObject(t, `{"metadata":{"managedFields":"x"}}`), mustObject(t, `{"metadata":{}}`)) {
		t.Error("unreadable managedFields hand something over")
	}
}
