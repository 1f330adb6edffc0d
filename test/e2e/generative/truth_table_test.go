package generative_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// withLastApplied decodes obj and sets its last-applied to la.
func withLastApplied(t *testing.T, obj, la string) map[string]any {
	t.Helper()
	m := decodeJSON(t, obj)
	if la != "" {
		framework.EnsureMap(m, "metadata", "annotations")[lastAppliedKey] = la
	}
	return m
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return m
}

func strs(ps []fieldPath) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

var (
	image    = framework.ContainersPath.Named("app").Key("image")
	envAdded = framework.ContainersPath.Named("app").Key("env").Named("A")
	restart  = framework.TemplatePath.Key("metadata").Key("annotations").Key("kubectl.kubernetes.io/restartedAt")
)

// The fields a write moves away from last-applied.
func TestOwnedMoves(t *testing.T) {
	const la = `{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`
	tests := map[string]struct {
		before, after, laAfter string
		want                   []string
	}{
		"a changed image that last-applied owns": {
			before: `{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			after:  `{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			want:   []string{"spec.template.spec.containers[name=app].image"},
		},
		"a scale to zero of owned replicas": {
			before: `{"spec":{"replicas":2}}`,
			after:  `{"spec":{"replicas":0}}`,
			want:   []string{"spec.replicas"},
		},
		"a new field last-applied does not have": {
			before: `{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			after:  `{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
		},
		"a value set back to last-applied's": {
			before: `{"spec":{"replicas":5}}`,
			after:  `{"spec":{"replicas":2}}`,
		},
		"a write that also rewrites last-applied moves nothing": {
			before:  `{"spec":{"replicas":2}}`,
			after:   `{"spec":{"replicas":3}}`,
			laAfter: `{"spec":{"replicas":3}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			laAfter := la
			if tc.laAfter != "" {
				laAfter = tc.laAfter
			}
			got := strs(ownedMoves(withLastApplied(t, tc.before, la), withLastApplied(t, tc.after, laAfter)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("moves (-want +got):\n%s", diff)
			}
		})
	}
}

// kubectl apply --server-side drops last-applied after its apply (its
// migration): what the apply moved away from last-applied still counts.
func TestMovedFrom(t *testing.T) {
	const la = `{"spec":{"replicas":2}}`
	tests := map[string]struct {
		before, after string
		want          []string
	}{
		"replicas moved, last-applied dropped after": {
			before: `{"spec":{"replicas":2}}`,
			after:  `{"spec":{"replicas":3}}`,
			want:   []string{"spec.replicas"},
		},
		"replicas kept, last-applied dropped after": {
			before: `{"spec":{"replicas":2}}`,
			after:  `{"spec":{"replicas":2,"minReadySeconds":5}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before, after := withLastApplied(t, tc.before, la), withLastApplied(t, tc.after, "")
			got := strs(movedFrom(before, after))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("moves (-want +got):\n%s", diff)
			}
			if moves := ownedMoves(before, after); moves != nil {
				t.Errorf("ownedMoves = %v, want none: last-applied changed", strs(moves))
			}
		})
	}
}

// The fields a write changed, as messages name them: the keys of an added
// map, the elements of an added list keyed by name.
func TestChanged(t *testing.T) {
	tests := map[string]struct {
		before, after string
		want          []string
	}{
		"a first environment variable": {
			before: `{"spec":{"template":{"spec":{"containers":[{"name":"app"}]}}}}`,
			after:  `{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"A","value":"1"}]}]}}}}`,
			want:   []string{"spec.template.spec.containers[name=app].env[name=A]"},
		},
		"a first annotation": {
			before: `{"metadata":{"name":"x"}}`,
			after:  `{"metadata":{"name":"x","annotations":{"a":"1","b":"2"}}}`,
			want:   []string{"metadata.annotations.a", "metadata.annotations.b"},
		},
		"a changed value": {
			before: `{"spec":{"replicas":1}}`,
			after:  `{"spec":{"replicas":2}}`,
			want:   []string{"spec.replicas"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, strs(changed(decodeJSON(t, tc.before), decodeJSON(t, tc.after)))); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
}

// The truth of an apply: orphans and reverts of the fields people set.
func TestTruthOfApply(t *testing.T) {
	tests := map[string]struct {
		planted, applied            []fieldPath
		manifest, la, before, after string
		orphans, reverts            []string
	}{
		"a person's field the apply keeps is an orphan": {
			planted:  []fieldPath{envAdded, restart},
			manifest: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			la:       `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			before:   `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			after:    `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			orphans:  []string{"spec.template.spec.containers[name=app].env[name=A]"},
		},
		"a person's change of an owned field that the apply puts back is a revert": {
			planted:  []fieldPath{image},
			manifest: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			la:       `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			before:   `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			after:    `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			reverts:  []string{"spec.template.spec.containers[name=app].image"},
		},
		"a field the manifest takes over is neither": {
			planted:  []fieldPath{envAdded},
			manifest: `{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"A","value":"1"}]}]}}}}`,
			la:       `{"spec":{"template":{"spec":{"containers":[{"name":"app"}]}}}}`,
			before:   `{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"A","value":"1"}]}]}}}}`,
			after:    `{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"A","value":"1"}]}]}}}}`,
		},
		"scaled replicas the manifest leaves out are handed over, no orphan": {
			planted:  []fieldPath{framework.ReplicasPath},
			manifest: `{"spec":{"minReadySeconds":1}}`,
			la:       `{"spec":{"minReadySeconds":1}}`,
			before:   `{"spec":{"replicas":3,"minReadySeconds":1}}`,
			after:    `{"spec":{"replicas":3,"minReadySeconds":1}}`,
		},
		"a person's server-side apply: the next apply reverts it, no orphan": {
			applied:  []fieldPath{image, envAdded},
			manifest: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			la:       `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			before:   `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2","env":[{"name":"A","value":"1"}]}]}}}}`,
			after:    `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			reverts:  []string{"spec.template.spec.containers[name=app].image"},
		},
		"no field a person set, nothing to report": {
			manifest: `{"spec":{"replicas":1}}`,
			la:       `{"spec":{"replicas":1}}`,
			before:   `{"spec":{"replicas":3}}`,
			after:    `{"spec":{"replicas":1}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := truthOfApply(tc.planted, tc.applied, decodeJSON(t, tc.manifest), withLastApplied(t, tc.before, tc.la), decodeJSON(t, tc.after))
			if diff := cmp.Diff(tc.orphans, strs(got.orphans)); diff != "" {
				t.Errorf("orphans (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.reverts, strs(got.reverts)); diff != "" {
				t.Errorf("reverts (-want +got):\n%s", diff)
			}
		})
	}
}

// An undo's repair may change last-applied only in the restored template
// (and a Deployment's annotations), to values a manifest had.
func TestRepairBeyondProof(t *testing.T) {
	applied := []string{
		`{"spec":{"minReadySeconds":10,"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
	}
	tests := map[string]struct {
		kind, before, after   string
		liveBefore, liveAfter string
		want                  []string
	}{
		"the restored image of an earlier manifest": {
			kind:   "Deployment",
			before: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			after:  `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
		},
		"a whole revision's last-applied forgets minReadySeconds": {
			kind:   "StatefulSet",
			before: `{"spec":{"minReadySeconds":10,"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			after:  `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			want:   []string{"spec.minReadySeconds"},
		},
		"restartedAt that a restart stamped": {
			kind:   "Deployment",
			before: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			after:  `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"t1"}},"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			want:   []string{"spec.template.metadata"},
		},
		"a Deployment's image that an allowed patch set and the undo restored": {
			kind:       "Deployment",
			before:     `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			after:      `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"set:9"}]}}}}`,
			liveBefore: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			liveAfter:  `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"set:9"}]}}}}`,
		},
		"a Deployment's nodeSelector that gains a person's key": {
			kind:       "Deployment",
			before:     `{"spec":{"template":{"spec":{"nodeSelector":{"a":"1","c":"3"}}}}}`,
			after:      `{"spec":{"template":{"spec":{"nodeSelector":{"a":"1","b":"2"}}}}}`,
			liveBefore: `{"spec":{"template":{"spec":{"nodeSelector":{"a":"1","b":"2","c":"3"}}}}}`,
			liveAfter:  `{"spec":{"template":{"spec":{"nodeSelector":{"a":"1","b":"2"}}}}}`,
			want:       []string{"spec.template.spec.nodeSelector.b"},
		},
		"a Deployment's constraint whose selector gains matchExpressions": {
			kind:       "Deployment",
			before:     `{"spec":{"template":{"spec":{"topologySpreadConstraints":[{"topologyKey":"zone","labelSelector":{"matchLabels":{"app":"web","v":"2"}}}]}}}}`,
			after:      `{"spec":{"template":{"spec":{"topologySpreadConstraints":[{"topologyKey":"zone","labelSelector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"track","operator":"NotIn","values":["canary"]}]}}]}}}}`,
			liveBefore: `{"spec":{"template":{"spec":{"topologySpreadConstraints":[{"topologyKey":"zone","labelSelector":{"matchLabels":{"app":"web","v":"2"},"matchExpressions":[{"key":"track","operator":"NotIn","values":["canary"]}]}}]}}}}`,
			liveAfter:  `{"spec":{"template":{"spec":{"topologySpreadConstraints":[{"topologyKey":"zone","labelSelector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"track","operator":"NotIn","values":["canary"]}]}}]}}}}`,
			want:       []string{"spec.template.spec.topologySpreadConstraints"},
		},
		"a StatefulSet's image that an allowed patch set and the undo restored": {
			kind:       "StatefulSet",
			before:     `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			after:      `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"set:9"}]}}}}`,
			liveBefore: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			liveAfter:  `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"set:9"}]}}}}`,
			want:       []string{"spec.template.spec.containers[name=app].image"},
		},
		"a Deployment's image that the undo did not restore": {
			kind:       "Deployment",
			before:     `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			after:      `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"set:9"}]}}}}`,
			liveBefore: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"set:9"}]}}}}`,
			liveAfter:  `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"set:9"}]}}}}`,
			want:       []string{"spec.template.spec.containers[name=app].image"},
		},
		"a Deployment's mesh stamp that the undo restored and the injector stamped again": {
			kind:       "Deployment",
			before:     `{"metadata":{"annotations":{"mesh.example.com/injected-revision":"7"}}}`,
			after:      `{"metadata":{"annotations":{"mesh.example.com/injected-revision":"1"}}}`,
			liveBefore: `{"metadata":{"annotations":{"mesh.example.com/injected-revision":"8"}}}`,
			liveAfter:  `{"metadata":{"annotations":{"mesh.example.com/injected-revision":"9"}}}`,
		},
		"a mesh stamp that last-applied did not have": {
			kind:       "Deployment",
			before:     `{"metadata":{"annotations":{"a":"1"}}}`,
			after:      `{"metadata":{"annotations":{"a":"1","mesh.example.com/injected-revision":"1"}}}`,
			liveBefore: `{"metadata":{"annotations":{"mesh.example.com/injected-revision":"8"}}}`,
			liveAfter:  `{"metadata":{"annotations":{"mesh.example.com/injected-revision":"9"}}}`,
			want:       []string{"metadata.annotations[mesh.example.com/injected-revision]"},
		},
		"a StatefulSet's mesh stamp": {
			kind:       "StatefulSet",
			before:     `{"metadata":{"annotations":{"mesh.example.com/injected-revision":"7"}}}`,
			after:      `{"metadata":{"annotations":{"mesh.example.com/injected-revision":"1"}}}`,
			liveBefore: `{"metadata":{"annotations":{"mesh.example.com/injected-revision":"8"}}}`,
			liveAfter:  `{"metadata":{"annotations":{"mesh.example.com/injected-revision":"9"}}}`,
			want:       []string{"metadata.annotations[mesh.example.com/injected-revision]"},
		},
		"an image that kubectl set image set": {
			kind:   "Deployment",
			before: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			after:  `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"set:9"}]}}}}`,
			want:   []string{"spec.template.spec.containers[name=app].image"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var manifests []map[string]any
			for _, m := range applied {
				manifests = append(manifests, decodeJSON(t, m))
			}
			live := func(s string) string {
				if s == "" {
					return `{}`
				}
				return s
			}
			got := strs(repairBeyondProof(tc.kind, withLastApplied(t, live(tc.liveBefore), tc.before), withLastApplied(t, live(tc.liveAfter), tc.after), manifests))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("beyond proof (-want +got):\n%s", diff)
			}
		})
	}
}

// A path a message names matches the field or a field inside it.
func TestNames(t *testing.T) {
	tests := map[string]struct {
		reported string
		want     bool
	}{
		"the field itself":             {"spec.template.spec.containers[name=app].env[name=A]", true},
		"a field inside it":            {"spec.template.spec.containers[name=app].env[name=A].value", true},
		"a sibling with a longer name": {"spec.template.spec.containers[name=app].env[name=AB]", false},
		"the field's parent":           {"spec.template.spec.containers[name=app].env", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := names(tc.reported, envAdded); got != tc.want {
				t.Errorf("names(%q, %s) = %v, want %v", tc.reported, envAdded, got, tc.want)
			}
		})
	}
}

// An orphaned-field finding may name the struct that holds a person's
// field when the struct holds nothing else (merge's wholeStruct), never
// one that holds a field nobody planted.
func TestWholeOf(t *testing.T) {
	cpu := framework.ContainersPath.Named("app").Key("resources").Key("requests").Key("cpu")
	memory := framework.ContainersPath.Named("app").Key("resources").Key("requests").Key("memory")
	const resources = "spec.template.spec.containers[name=app].resources"
	tests := map[string]struct {
		reported string
		before   string
		orphans  []fieldPath
		want     bool
	}{
		"the struct holds only the orphan": {
			reported: resources, orphans: []fieldPath{cpu}, want: true,
			before: `{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"90m"},"limits":{}}}]}}}}`,
		},
		"the struct holds a field nobody planted": {
			reported: resources, orphans: []fieldPath{cpu},
			before: `{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"90m","memory":"1Gi"}}}]}}}}`,
		},
		"the struct holds two orphans": {
			reported: resources, orphans: []fieldPath{cpu, memory}, want: true,
			before: `{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"90m","memory":"1Gi"}}}]}}}}`,
		},
		"another path": {
			reported: "spec.template.spec.containers[name=app]", orphans: []fieldPath{cpu},
			before: `{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"90m"}}}]}}}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, wholeOf(tc.reported, tc.orphans[0], tc.orphans, decodeJSON(t, tc.before))); diff != "" {
				t.Errorf("wholeOf (-want +got):\n%s", diff)
			}
		})
	}
}

// A re-creation (kubectl replace --force, with or without --save-config)
// makes a new object: what people set on the old one is gone, and a value
// the server defaults on the new one (spec.replicas 1 after a scale to 1)
// is nobody's (generative seed 287868, sequence 002).
func TestRecordRecreation(t *testing.T) {
	scaledTo1 := decodeJSON(t, `{"metadata":{"uid":"u-1"},"spec":{"replicas":1}}`)
	tests := map[string]struct {
		after string
		want  []string
	}{
		"kubectl replace --force --save-config re-creates the object": {
			after: `{"metadata":{"uid":"u-2"},"spec":{"replicas":1}}`,
			want:  nil,
		},
		"kubectl replace --save-config keeps the object": {
			after: `{"metadata":{"uid":"u-1"},"spec":{"replicas":1}}`,
			want:  []string{"spec.replicas"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{fields: map[string]setField{
				framework.ReplicasPath.String(): {path: framework.ReplicasPath, person: true},
			}}
			s := step{As: alice, Kind: write, RewritesLastApplied: true, Args: []string{"replace", "--force", "--save-config", "-f", "-"}}
			r.record(s, scaledTo1, decodeJSON(t, tc.after))
			if diff := cmp.Diff(tc.want, strs(r.planted(false))); diff != "" {
				t.Errorf("fields a person set (-want +got):\n%s", diff)
			}
		})
	}
}

// Who a write's fields count as set by: a count scaled from or to zero
// through /scale has no manager in managedFields (the Scale's replicas is
// omitempty), so findings of it are allowed, not required.
func TestRecordAttribution(t *testing.T) {
	tests := map[string]struct {
		s                    step
		before, after        string
		planted, setByRobots []string
	}{
		"a person's scale of a count": {
			s:      person("scale", "deployment/web", "--replicas=3"),
			before: `{"spec":{"replicas":1}}`, after: `{"spec":{"replicas":3}}`,
			planted: []string{"spec.replicas"},
		},
		"a person's scale from zero": {
			s:      person("scale", "deployment/web", "--replicas=1"),
			before: `{"spec":{"replicas":0}}`, after: `{"spec":{"replicas":1}}`,
			setByRobots: []string{"spec.replicas"},
		},
		"a person's scale to zero": {
			// Soak seed 271126, sequence 226: the Scale sends "spec":{},
			// and the count loses its owner; KEDA's scale to zero leaves
			// the same object.
			s:      person("scale", "deployment/web", "--replicas=0"),
			before: `{"spec":{"replicas":1}}`, after: `{"spec":{"replicas":0}}`,
			setByRobots: []string{"spec.replicas"},
		},
		"a person's scale of a count that no entry owned leaves it unowned": {
			// Soak seed 271126, sequences 744 and 766: a /scale that left
			// the count as it was split its owner's entry, the next write
			// dropped the count from it, and the API server records no
			// manager of a count that a /scale changes while no entry owns
			// it (TestScaleOfAnUnownedCountRecordsNoManager).
			s:           person("scale", "deployment/web", "--replicas=3"),
			before:      `{"metadata":{"managedFields":[` + clientSideApplyEntry + `]},"spec":{"replicas":2}}`,
			after:       `{"metadata":{"managedFields":[` + clientSideApplyEntry + `]},"spec":{"replicas":3}}`,
			setByRobots: []string{"spec.replicas"},
		},
		"a person's scale of a count that the scale's entry then owns": {
			s:       person("scale", "deployment/web", "--replicas=3"),
			before:  `{"metadata":{"managedFields":[` + clientSideApplyEntry + `]},"spec":{"replicas":2}}`,
			after:   `{"metadata":{"managedFields":[` + clientSideApplyEntry + `,` + scaleEntry + `]},"spec":{"replicas":3}}`,
			planted: []string{"spec.replicas"},
		},
		"a person's patch of a count that no entry owns": {
			// Only a /scale loses the count's owner: a patch's entry owns
			// what it changed.
			s:       person("patch", "deployment/web", "-p", `{"spec":{"replicas":3}}`),
			before:  `{"metadata":{"managedFields":[` + clientSideApplyEntry + `]},"spec":{"replicas":2}}`,
			after:   `{"metadata":{"managedFields":[` + clientSideApplyEntry + `]},"spec":{"replicas":3}}`,
			planted: []string{"spec.replicas"},
		},
		"a person's patch to zero": {
			s:      person("patch", "deployment/web", "-p", `{"spec":{"replicas":0}}`),
			before: `{"spec":{"replicas":1}}`, after: `{"spec":{"replicas":0}}`,
			planted: []string{"spec.replicas"},
		},
		"a person's patch from zero": {
			s:      person("patch", "deployment/web", "-p", `{"spec":{"replicas":1}}`),
			before: `{"spec":{"replicas":0}}`, after: `{"spec":{"replicas":1}}`,
			planted: []string{"spec.replicas"},
		},
		"a set image under kubectl apply's manager": {
			s:           person("set", "image", "deployment/web", "app=a:2", "--field-manager=kubectl-client-side-apply"),
			before:      `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			after:       `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			setByRobots: []string{"spec.template.spec.containers[name=app].image"},
		},
		"an undo by bob, whom the rules exempt, restores a person's env var": {
			s:       step{Writer: "kubectl rollout undo (exempt)", As: bob, Kind: undo, Args: []string{"rollout", "undo", "deployment/web"}},
			before:  `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			after:   `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			planted: []string{"spec.template.spec.containers[name=app].env[name=A]"},
		},
		"Argo CD's replace --save-config of the manifest last-applied has resets the count": {
			// Soak seed 271126, sequence 056: nothing tells this write
			// from a plain replace that keeps last-applied.
			s:           argoReplace(),
			before:      `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{}}"}},"spec":{"replicas":2}}`,
			after:       `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{}}"}},"spec":{"replicas":1}}`,
			setByRobots: []string{"spec.replicas"},
		},
		"a person's replace --save-config of the manifest last-applied has resets the count": {
			s:           step{Writer: "kubectl replace --save-config", As: alice, Kind: write, Args: []string{"replace", "--save-config", "-f", "-"}, RewritesLastApplied: true},
			before:      `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{}}"}},"spec":{"replicas":2}}`,
			after:       `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{}}"}},"spec":{"replicas":1}}`,
			setByRobots: []string{"spec.replicas"},
		},
		"Argo CD's replace --save-config of another manifest records an apply": {
			s:      argoReplace(),
			before: `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{\"replicas\":2}}"}},"spec":{"replicas":2}}`,
			after:  `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{}}"}},"spec":{"replicas":1}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{fields: map[string]setField{}}
			r.record(tc.s, decodeJSON(t, tc.before), decodeJSON(t, tc.after))
			if diff := cmp.Diff(tc.planted, strs(r.planted(false))); diff != "" {
				t.Errorf("planted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.setByRobots, strs(r.setByRobots())); diff != "" {
				t.Errorf("setByRobots (-want +got):\n%s", diff)
			}
		})
	}
}

// Entries of managedFields for TestRecordAttribution: kubectl apply's,
// without the count, and kubectl scale's, with it.
const (
	clientSideApplyEntry = `{"manager":"kubectl-client-side-apply","operation":"Update","fieldsV1":{"f:spec":{"f:template":{}}}}`
	scaleEntry           = `{"manager":"kubectl","operation":"Update","subresource":"scale","fieldsV1":{"f:spec":{"f:replicas":{}}}}`
)

// A value that a person's kubectl edit --save-config recorded is the
// edit's once a write removed last-applied: an apply may then warn that it
// discards it (soak seed 271126, sequence 332: edit --save-config of the
// image, Flux's clean-up of last-applied, kubectl apply of the first
// manifest).
func TestSavedEditLosesItsRecordWithLastApplied(t *testing.T) {
	const (
		applied = `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`
		saved   = `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"edit\":3}"}},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"edit:3"}]}}}}`
		cleaned = `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"edit:3"}]}}}}`
		kept    = `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"edit\":3}","x":"y"}},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"edit:3"}]}}}}`
	)
	editSave := step{Writer: "kubectl edit --save-config", As: alice, Kind: write, Args: []string{"edit", "--save-config"}, RewritesLastApplied: true}
	cleanUp := step{Writer: "Flux last-applied clean-up", As: flux, Kind: write, Args: []string{"patch"}}
	tests := map[string]struct {
		after string
		want  []string
	}{
		"last-applied removed": {after: cleaned, want: []string{"spec.template.spec.containers[name=app].image"}},
		"last-applied kept":    {after: kept, want: []string{"metadata.annotations.x"}},
	}
	// The value changed since the save and came back by an apply: the
	// apply's, which owns it (an adversarial review).
	t.Run("the saved value changed and an apply put it back", func(t *testing.T) {
		const other = `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apply\":2}"}},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"apply:2"}]}}}}`
		apply := step{Writer: "kubectl apply", As: alice, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}}
		r := &runner{fields: map[string]setField{}}
		r.record(editSave, decodeJSON(t, applied), decodeJSON(t, saved))
		r.record(apply, decodeJSON(t, saved), decodeJSON(t, other))
		r.record(apply, decodeJSON(t, other), decodeJSON(t, saved))
		r.record(cleanUp, decodeJSON(t, saved), decodeJSON(t, cleaned))
		if got := strs(r.setByRobots()); len(got) != 0 {
			t.Errorf("setByRobots = %v, want none", got)
		}
	})
	// A field the sequence already attributes keeps its writer.
	t.Run("a field an undo restored stays the undo's", func(t *testing.T) {
		r := &runner{fields: map[string]setField{}}
		r.record(editSave, decodeJSON(t, applied), decodeJSON(t, saved))
		image := framework.ContainersPath.Named("app").Key("image")
		r.fields[image.String()] = setField{path: image, person: true, undo: true}
		r.record(cleanUp, decodeJSON(t, saved), decodeJSON(t, cleaned))
		if got := r.fields[image.String()]; got.unattributed || !got.undo {
			t.Errorf("the undo's field after the clean-up = %+v, want it the undo's still", got)
		}
	})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{fields: map[string]setField{}}
			r.record(editSave, decodeJSON(t, applied), decodeJSON(t, saved))
			if got := strs(r.setByRobots()); len(got) != 0 {
				t.Fatalf("after the save, setByRobots = %v, want none", got)
			}
			r.record(cleanUp, decodeJSON(t, saved), decodeJSON(t, tc.after))
			if diff := cmp.Diff(tc.want, strs(r.setByRobots())); diff != "" {
				t.Errorf("setByRobots (-want +got):\n%s", diff)
			}
		})
	}
}

// argoReplace is Argo CD's Replace=true sync step.
func argoReplace() step {
	return step{Writer: "Argo CD Replace=true", As: argocd, Kind: write, Args: []string{"replace", "--save-config", "-f", "-"}, RewritesLastApplied: true}
}

// What a kubectl replace wrote and the manifest leaves out may be called
// orphaned once last-applied is gone (generative seed 821794, sequence
// 002: kubectl replace --force --save-config set minReadySeconds, a plain
// kubectl replace dropped last-applied, and the next apply without it was
// warned, truly, that it can never remove it).
func TestReplacedLeftOut(t *testing.T) {
	replaced := decodeJSON(t, `{"spec":{"minReadySeconds":3,"paused":false}}`)
	tests := map[string]struct {
		before, manifest string
		want             []string
	}{
		"without last-applied": {
			before:   `{"spec":{"minReadySeconds":3,"paused":false}}`,
			manifest: `{"spec":{"paused":false}}`,
			want:     []string{"spec.minReadySeconds"},
		},
		"another value since": {
			before:   `{"spec":{"minReadySeconds":5,"paused":false}}`,
			manifest: `{"spec":{}}`,
			want:     []string{"spec.paused"},
		},
		"with last-applied": {
			before:   `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},"spec":{"minReadySeconds":3}}`,
			manifest: `{"spec":{}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{replaced: []map[string]any{replaced}}
			if diff := cmp.Diff(tc.want, strs(r.replacedLeftOut(decodeJSON(t, tc.before), decodeJSON(t, tc.manifest)))); diff != "" {
				t.Errorf("replacedLeftOut (-want +got):\n%s", diff)
			}
		})
	}
}

// What a kubectl replace wrote and the manifest sets to another value may
// be called a revert once last-applied is gone (soak seed 271126, sequence
// 646: kubectl replace --force --save-config set the image, a plain
// kubectl replace dropped last-applied, and an apply of a manifest with a
// new image was told it sets the image back).
func TestReplacedChanged(t *testing.T) {
	replaced := decodeJSON(t, `{"spec":{"image":"minio/minio:latest","paused":false,"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest"}]}}}}`)
	tests := map[string]struct {
		before, manifest string
		want             []string
	}{
		"without last-applied": {
			before:   `{"spec":{"image":"minio/minio:latest","paused":false}}`,
			manifest: `{"spec":{"image":"registry.example/manifest:10","paused":false}}`,
			want:     []string{"spec.image"},
		},
		"a container's image": {
			before:   `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest","imagePullPolicy":"Always"}]}}}}`,
			manifest: `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"registry.example/manifest:10"}]}}}}`,
			want:     []string{"spec.template.spec.containers[name=minio].image"},
		},
		"another value since": {
			before:   `{"spec":{"image":"registry.example/set:6"}}`,
			manifest: `{"spec":{"image":"registry.example/manifest:10"}}`,
		},
		"left out of the manifest": {
			before:   `{"spec":{"image":"minio/minio:latest"}}`,
			manifest: `{"spec":{}}`,
		},
		"with last-applied": {
			before:   `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},"spec":{"image":"minio/minio:latest"}}`,
			manifest: `{"spec":{"image":"registry.example/manifest:10"}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{replaced: []map[string]any{replaced}}
			if diff := cmp.Diff(tc.want, strs(r.replacedChanged(decodeJSON(t, tc.before), decodeJSON(t, tc.manifest)))); diff != "" {
				t.Errorf("replacedChanged (-want +got):\n%s", diff)
			}
		})
	}
}

// The server defaults of a re-creation by kubectl replace --force may be
// called orphaned once a later kubectl replace changed the object in place
// and a write left them behind (soak seed 271126, sequence 646:
// imagePullPolicy Always, defaulted for minio/minio:latest, after an apply
// changed the image); not before that replace, nor after another write
// re-created the object, nor when the manifest has them.
func TestReplacedDefaultsLeftOut(t *testing.T) {
	created := `{"metadata":{"uid":"1"},"spec":{"image":"minio/minio:latest","imagePullPolicy":"Always"}}`
	inPlace := `{"metadata":{"uid":"1"},"spec":{"image":"minio/minio:latest","imagePullPolicy":"Always","paused":true}}`
	replace := step{Args: []string{"replace", "--force", "--save-config", "-f", "-"}}
	tests := map[string]struct {
		steps    []step
		objects  []string // before the first step, then after each
		manifest string
		want     []string
	}{
		"claimed by a later replace": {
			steps:    []step{replace, {Args: []string{"replace", "-f", "-"}}},
			objects:  []string{`{"metadata":{"uid":"0"},"spec":{}}`, created, inPlace},
			manifest: `{"spec":{"image":"registry.example/manifest:10"}}`,
			want:     []string{"spec.imagePullPolicy"},
		},
		"a container's pull policy": {
			steps: []step{replace, {Args: []string{"replace", "-f", "-"}}},
			objects: []string{
				`{"metadata":{"uid":"0"},"spec":{}}`,
				`{"metadata":{"uid":"1"},"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest","imagePullPolicy":"Always"}]}}}}`,
				`{"metadata":{"uid":"1"},"spec":{"paused":true,"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest","imagePullPolicy":"Always"}]}}}}`,
			},
			manifest: `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"registry.example/manifest:10"}]}}}}`,
			want:     []string{"spec.template.spec.containers[name=minio].imagePullPolicy"},
		},
		"the re-creation alone": {
			steps:    []step{replace},
			objects:  []string{`{"metadata":{"uid":"0"},"spec":{}}`, created},
			manifest: `{"spec":{"image":"registry.example/manifest:10"}}`,
		},
		"changed in place by another writer": {
			steps:    []step{replace, {Args: []string{"patch", "-p", "{}"}}},
			objects:  []string{`{"metadata":{"uid":"0"},"spec":{}}`, created, inPlace},
			manifest: `{"spec":{"image":"registry.example/manifest:10"}}`,
		},
		"in the manifest": {
			steps:    []step{replace, {Args: []string{"replace", "-f", "-"}}},
			objects:  []string{`{"metadata":{"uid":"0"},"spec":{}}`, created, inPlace},
			manifest: `{"spec":{"image":"registry.example/manifest:10","imagePullPolicy":"Always","paused":true}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{}
			for i, s := range tc.steps {
				r.noteReplacedDefaults(s, decodeJSON(t, tc.objects[i]), decodeJSON(t, tc.objects[i+1]))
			}
			last := decodeJSON(t, tc.objects[len(tc.objects)-1])
			if diff := cmp.Diff(tc.want, strs(r.replacedDefaultsLeftOut(last, decodeJSON(t, tc.manifest)))); diff != "" {
				t.Errorf("replacedDefaultsLeftOut (-want +got):\n%s", diff)
			}
		})
	}
}

// A label that kubectl edit --save-config set is an allowed orphan once a
// write dropped last-applied and left it at that value (kubectl apply
// --server-side's migration); not while last-applied is there, nor at
// another value, nor when the manifest has it (generative seed 205623,
// sequence 008).
func TestSavedLeftOut(t *testing.T) {
	label := framework.Path("metadata", "labels").Key("team")
	saved := decodeJSON(t, `{"metadata":{"labels":{"team":"a"}}}`)
	tests := map[string]struct {
		effect, manifest string
		want             []string
	}{
		"last-applied dropped": {
			effect:   `{"metadata":{"labels":{"team":"a"}}}`,
			manifest: `{"metadata":{"labels":{}}}`,
			want:     []string{"metadata.labels.team"},
		},
		"last-applied kept": {
			effect:   `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"},"labels":{"team":"a"}}}`,
			manifest: `{}`,
		},
		"another value since": {
			effect:   `{"metadata":{"labels":{"team":"b"}}}`,
			manifest: `{}`,
		},
		"in the manifest": {
			effect:   `{"metadata":{"labels":{"team":"a"}}}`,
			manifest: `{"metadata":{"labels":{"team":"a"}}}`,
		},
		"gone": {
			effect:   `{"metadata":{"labels":{}}}`,
			manifest: `{}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{savedEdits: []savedEdit{{path: label, after: saved}}}
			if diff := cmp.Diff(tc.want, strs(r.savedLeftOut(decodeJSON(t, tc.effect), decodeJSON(t, tc.manifest)))); diff != "" {
				t.Errorf("savedLeftOut (-want +got):\n%s", diff)
			}
		})
	}
}

// The mesh's stamp is the undo's in managedFields only when the undo's
// entry alone owns it (the API server's record).
func TestMeshOwnedByUndo(t *testing.T) {
	entry := func(manager, operation, subresource string) string {
		sub := ""
		if subresource != "" {
			sub = `,"subresource":"` + subresource + `"`
		}
		return `{"manager":"` + manager + `","operation":"` + operation + `"` + sub + `,"fieldsV1":{"f:metadata":{"f:annotations":{"f:mesh.example.com/injected-revision":{}}}}}`
	}
	other := `{"manager":"kubectl-client-side-apply","operation":"Update","fieldsV1":{"f:spec":{"f:replicas":{}}}}`
	tests := map[string]struct {
		entries string
		want    bool
	}{
		"the undo's entry alone":         {entries: entry("kubectl", "Update", "") + "," + other, want: true},
		"the undo's and an apply's":      {entries: entry("kubectl", "Update", "") + "," + entry("kubectl-client-side-apply", "Update", ""), want: false},
		"a server-side apply by kubectl": {entries: entry("kubectl", "Apply", ""), want: false},
		"nobody (the mesh's own stamp)":  {entries: other, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := decodeJSON(t, `{"metadata":{"managedFields":[`+tc.entries+`]}}`)
			if got := meshOwnedByUndo(obj); got != tc.want {
				t.Errorf("meshOwnedByUndo = %v, want %v", got, tc.want)
			}
		})
	}
}

// A remedy whose guard refuses is no false warning when the object changed
// since the warning (the periodic audit fixed it in between: pinned seed
// 37964, sequence 014), and only then.
func TestChangedSinceWarned(t *testing.T) {
	warned := decodeJSON(t, `{"metadata":{"labels":{"a":"1"},"resourceVersion":"5"},"spec":{"template":{"spec":{"containers":[{"name":"s","env":[{"name":"X"}]}]}}},"status":{"replicas":1}}`)
	tests := map[string]struct {
		now  string
		want bool
	}{
		"the env var removed":     {now: `{"metadata":{"labels":{"a":"1"},"resourceVersion":"6"},"spec":{"template":{"spec":{"containers":[{"name":"s","env":[]}]}}}}`, want: true},
		"a label changed":         {now: `{"metadata":{"labels":{"a":"2"},"resourceVersion":"6"},"spec":{"template":{"spec":{"containers":[{"name":"s","env":[{"name":"X"}]}]}}}}`, want: true},
		"only status and version": {now: `{"metadata":{"labels":{"a":"1"},"resourceVersion":"7"},"spec":{"template":{"spec":{"containers":[{"name":"s","env":[{"name":"X"}]}]}}},"status":{"replicas":2}}`, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := changedSinceWarned(warned, decodeJSON(t, tc.now)); got != tc.want {
				t.Errorf("changedSinceWarned = %v, want %v", got, tc.want)
			}
		})
	}
}
