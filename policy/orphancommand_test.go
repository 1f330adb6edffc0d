package policy

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

func mustParse(t *testing.T, s string) merge.Path {
	t.Helper()
	p, err := merge.ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRemovePatchesReachRego: merge's removePatch of each orphan is part of
// the analysis, survives a JSON round trip, and becomes the kubectl patch
// command; an orphan without one gets kubectl edit.
func TestRemovePatchesReachRego(t *testing.T) {
	in := loadInput(t, "clean-apply")
	patch := `[{"op":"test","path":"/metadata/labels/debug","value":"true"},{"op":"remove","path":"/metadata/labels/debug"}]`
	in.Analysis.Orphans = []merge.FieldFact{
		{Path: mustParse(t, "metadata.labels.debug"), Live: "true", RemovePatch: patch},
		{Path: mustParse(t, "metadata.labels.gone"), Live: "x"},
	}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back Input
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{patch, ""}, []string{back.Analysis.Orphans[0].RemovePatch, back.Analysis.Orphans[1].RemovePatch}); diff != "" {
		t.Errorf("remove patches after a round trip (-want +got):\n%s", diff)
	}
	got, err := newEngine(t).Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Remove it with: kubectl patch deployments.apps/nginx -n default --type=json -p '" + patch + "'",
		"Remove it with: kubectl edit deployments.apps/nginx -n default",
	}
	if len(got) != 2 || !endsWith(got[0].Message, want[0]) || !endsWith(got[1].Message, want[1]) {
		t.Errorf("decisions = %+v, want messages ending with %q", got, want)
	}
}

func endsWith(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}
