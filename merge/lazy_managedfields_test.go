package merge

import (
	"strings"
	"testing"
)

// TestApplyDecodesManagedFieldsLazily: an apply decodes live's
// managedFields only when a fact asks who owns a changed field. Live's
// entry has a fieldsV1 that does not decode: an apply whose changes
// nobody else made never reads it and succeeds; one that puts back a
// value someone changed reads it and fails on it.
func TestApplyDecodesManagedFieldsLazily(t *testing.T) {
	tests := map[string]struct {
		liveValue string
		wantErr   bool
	}{
		"nobody changed the value: no owner is asked": {liveValue: "1"},
		"someone changed the value: its owners are":   {liveValue: "9", wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			live := mustYAML(t, []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: default
  managedFields:
  - manager: kubectl-edit
    operation: Update
    apiVersion: v1
    time: "2026-11-22T04:00:00Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:data": {"f:a": "not a field set"}}
data:
  a: "`+tt.liveValue+`"
`))
			setLastApplied(t, live, mustYAML(t, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  a: \"1\"\n")))
			manifest := mustYAML(t, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  a: \"2\"\n"))
			_, an, err := NewAnalyzer().predictApply(live, manifest)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "fieldsV1") {
					t.Fatalf("error %v, want one decoding fieldsV1; analysis %+v", err, an)
				}
				return
			}
			if err != nil {
				t.Fatalf("apply analysis: %v", err)
			}
			if len(an.Reverts)+len(an.Orphans) != 0 || an.ReplicasReset != nil {
				t.Errorf("facts: reverts %v, orphans %v, replicas reset %v; want none", an.Reverts, an.Orphans, an.ReplicasReset)
			}
		})
	}
}
