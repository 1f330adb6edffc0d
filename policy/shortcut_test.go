package policy

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// examples is where the user policies and configurations of
// docs/examples live.
const examples = "../docs/examples"

// examplePolicySets returns, per directory of docs/examples, the options
// that load its policies (*.rego) and its configuration (values.yaml).
func examplePolicySets(t *testing.T) map[string][]Option {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(examples, "*", "*_test.yaml"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no examples in %s: %v", examples, err)
	}
	sets := map[string][]Option{}
	for _, testFile := range dirs {
		dir := filepath.Dir(testFile)
		opts := []Option{WithDirs(dir)}
		if raw, err := os.ReadFile(filepath.Join(dir, "values.yaml")); err == nil {
			var values struct {
				Policy Config `json:"policy"`
			}
			if err := yaml.UnmarshalStrict(raw, &values); err != nil {
				t.Fatalf("decoding %s/values.yaml: %v", dir, err)
			}
			opts = append(opts, WithConfig(values.Policy))
		}
		sets["docs/examples/"+filepath.Base(dir)] = opts
	}
	return sets
}

// The shortcut must not change what Evaluate returns: random requests,
// many with empty analyses, get the same decisions (or an error both
// times) with it as with a full evaluation, for the bundled rules alone,
// with every example of docs/examples, and with user policies that decide
// on empty analyses.
func TestShortcutEqualsFullEvaluation(t *testing.T) {
	exempting := Config{
		BreakGlassGroups: []string{"oncall"},
		Exemptions:       Exemptions{Users: []string{"bob"}, FieldManagers: []string{"helm"}, ServiceAccounts: []string{"ci/*"}},
		NamespaceLabel:   "example.com/hygiene",
	}
	sets := map[string][]Option{
		"the bundled rules":                   nil,
		"the bundled rules with exemptions":   {WithConfig(exempting)},
		"a policy on a user's writes":         {WithModules(map[string]string{"mallory.rego": noUpdatesByMallory})},
		"a policy on a user's writes, exempt": {WithModules(map[string]string{"mallory.rego": noUpdatesByMallory}), WithConfig(exempting)},
		"a policy on the drift":               {WithModules(map[string]string{"drift.rego": driftOnServerSideApply})},
		"a policy on the whole analysis": {WithModules(map[string]string{
			"whole.rego": wholeAnalysis, "default.rego": defaultAnalysis, "prod.rego": noEditInProd,
		})},
	}
	for name, opts := range examplePolicySets(t) {
		sets[name] = opts
	}
	for name, opts := range sets {
		t.Run(name, func(t *testing.T) {
			fast := newEngine(t, opts...)
			full := newEngine(t, append(opts, WithFullEvaluation())...)
			r := rand.New(rand.NewPCG(14, 4))
			const n = 400
			for range n {
				in := randomInput(r)
				want, wantErr := full.Evaluate(t.Context(), in)
				got, gotErr := fast.Evaluate(t.Context(), in)
				if diff := cmp.Diff(want, got); diff != "" || (wantErr == nil) != (gotErr == nil) {
					raw, _ := json.Marshal(in)
					t.Fatalf("input %s:\nerrors %v, %v; decisions (-full +shortcut):\n%s", raw, wantErr, gotErr, diff)
				}
			}
			t.Logf("silent for %v: skipped %d of %d evaluations", fast.Status().Silent, fast.Skipped(), n)
			if len(fast.Status().Silent) > 0 && fast.Skipped() == 0 {
				t.Errorf("the shortcut never applied (silent for %v)", fast.Status().Silent)
			}
			if full.Skipped() != 0 {
				t.Errorf("the full evaluation skipped %d evaluations", full.Skipped())
			}
		})
	}
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// randomInput returns an input of any classification (the audit's
// too), by one of a few users, in a namespace with or without labels, with
// no analysis, an empty one or one with a finding or two.
func randomInput(r *rand.Rand) *Input {
	ref := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: pick(r, "default", "prod", ""), Name: "web"}
	user := pick(r,
		User{Username: "alice", Groups: []string{"system:authenticated"}},
		User{Username: "mallory", Groups: []string{"system:authenticated", "oncall"}},
		User{Username: "bob"},
		User{Username: "system:serviceaccount:ci:deployer", Groups: []string{"system:serviceaccounts"}, ServiceAccount: true},
	)
	labels := pick(r, nil, map[string]string{}, map[string]string{"env": "prod"},
		map[string]string{DefaultNamespaceLabel: pick(r, "warn", "dryrun", "off")},
		map[string]string{"example.com/hygiene": pick(r, "warn", "off"), "env": "prod"})
	return &Input{
		Request: Request{
			UID: "uid", Operation: pick(r, "UPDATE", "CREATE"), Subresource: pick(r, "", "scale"), DryRun: r.IntN(4) == 0,
			Object: ref, User: user,
			FieldManager: pick(r, "", "kubectl-edit", "kubectl-client-side-apply", "kubectl", "helm", "deployment-controller"),
		},
		Namespace:      Namespace{Name: ref.Namespace, Labels: labels},
		Classification: pick(r, append([]Classification{"audit"}, classifications...)...),
		Analysis:       randomAnalysis(r, ref),
	}
}

func randomAnalysis(r *rand.Rand, ref merge.ObjectRef) *merge.Analysis {
	if r.IntN(8) == 0 {
		return nil
	}
	a := &merge.Analysis{
		Object: ref, Operation: pick(r, "apply", "update"), Strategy: pick(r, "", merge.StrategicMergePatch),
		LastApplied:       merge.LastAppliedInfo{Status: merge.LastAppliedPresent, Bytes: r.IntN(300000)},
		AnnotationsBytes:  r.IntN(300000),
		Drift:             pick(r, nil, []merge.FieldFact{}, []merge.FieldFact{randomFact(r)}),
		ImperativeChanges: []merge.FieldFact{}, ApplyOwnedChanges: []merge.FieldFact{}, Appliers: []merge.Owner{}, Reverts: []merge.FieldFact{}, Orphans: []merge.FieldFact{},
		DefaultedDependents: []merge.FieldFact{},
	}
	for range pick(r, 0, 0, 1, 2) {
		addFinding(r, a)
	}
	return a
}

// addFinding makes a's analysis not empty.
func addFinding(r *rand.Rand, a *merge.Analysis) {
	switch r.IntN(14) {
	case 0:
		a.LastApplied.Status = merge.LastAppliedMissing
	case 1:
		a.LastApplied = merge.LastAppliedInfo{Status: merge.LastAppliedInvalid, Error: "not JSON"}
	case 2:
		a.LastAppliedTooLarge = true
	case 3:
		a.ImperativeChanges = append(a.ImperativeChanges, randomFact(r))
	case 4:
		a.Reverts = append(a.Reverts, randomFact(r))
	case 5:
		a.Orphans = append(a.Orphans, randomFact(r))
	case 6:
		a.DefaultedDependents = append(a.DefaultedDependents, randomFact(r))
	case 7:
		fact := randomFact(r)
		a.ReplicasReset = &fact
	case 8:
		a.Rollback = &merge.Rollback{RevisionKind: "ReplicaSet", RevisionName: "web-1", Revision: 1, Confirmed: true,
			StaleLastApplied: r.IntN(2) == 0, RepairedLastApplied: pick(r, "", "{}\n"), Changes: []merge.FieldFact{randomFact(r)}}
	case 9:
		a.Rollback = &merge.Rollback{Changes: []merge.FieldFact{}}
	case 10:
		*pick(r, &a.ImperativeChanges, &a.ApplyOwnedChanges, &a.Reverts, &a.Orphans, &a.DefaultedDependents) = nil
	case 11:
		a.LastApplied.Error = "present but odd"
	case 12:
		a.ApplyOwnedChanges = append(a.ApplyOwnedChanges, randomFact(r))
	case 13:
		a.Appliers = append(a.Appliers, merge.Owner{Manager: "argocd-controller", Operation: "Apply"})
	}
}

func randomFact(r *rand.Rand) merge.FieldFact {
	path, err := merge.ParsePath(pick(r, "spec.replicas", "spec.template.spec.containers[name=nginx].image", "metadata.labels.team"))
	if err != nil {
		panic(err)
	}
	return merge.FieldFact{
		Path: path, Live: pick[any](r, nil, int64(3), "nginx:1.14"), Result: pick[any](r, nil, int64(1), "nginx:1.16"),
		LastApplied: pick[any](r, nil, int64(2)), Manifest: pick[any](r, nil, "nginx:1.14"),
		Owners: pick(r, nil, []merge.Owner{{Manager: pick(r, "kubectl-set", "kubectl-edit", "kubectl-client-side-apply"),
			Operation: "Update", Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}}),
		RemovePatch: pick(r, "", `[{"op":"remove","path":"/metadata/labels/team"}]`),
	}
}
