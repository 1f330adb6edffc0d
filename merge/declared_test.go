package merge

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestParsePattern(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    string
		covers  []string
		misses  []string
		wantErr string
	}{
		"a scalar field covers itself and nothing beside it": {
			in: "spec.replicas", want: "spec.replicas",
			covers: []string{"spec.replicas"},
			misses: []string{"spec.paused", "spec"},
		},
		"an annotation key in brackets, as messages print it": {
			in: "metadata.annotations[sidecar.istio.io/status]", want: "metadata.annotations[sidecar.istio.io/status]",
			covers: []string{"metadata.annotations[sidecar.istio.io/status]"},
			misses: []string{"metadata.annotations[sidecar.istio.io/inject]", "spec.template.metadata.annotations[sidecar.istio.io/status]"},
		},
		"a keyed list element covers its fields": {
			in: "spec.template.spec.containers[name=web].image", want: "spec.template.spec.containers[name=web].image",
			covers: []string{"spec.template.spec.containers[name=web].image"},
			misses: []string{"spec.template.spec.containers[name=db].image", "spec.template.spec.containers[name=web].env[name=A]"},
		},
		"a wildcard list element matches every element": {
			in: "spec.template.spec.containers[*].image", want: "spec.template.spec.containers[*].image",
			covers: []string{"spec.template.spec.containers[name=web].image", "spec.template.spec.containers[name=db].image"},
			misses: []string{"spec.template.spec.initContainers[name=web].image", "spec.template.spec.containers[name=web]"},
		},
		"a wildcard map key after a dot matches every key and what lies beneath": {
			in: "metadata.annotations.*", want: "metadata.annotations[*]",
			covers: []string{"metadata.annotations[example.com/a]", "metadata.annotations.b"},
			misses: []string{"metadata.labels.a", "metadata.annotations"},
		},
		"a field covers what lies beneath it": {
			in: "spec.template.metadata.annotations", want: "spec.template.metadata.annotations",
			covers: []string{"spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"},
		},
		"a dotted annotation key outside brackets is refused": {
			in:      "metadata.annotations.sidecar.istio.io/status",
			wantErr: `parsing path "metadata.annotations.sidecar.istio.io/status": invalid field name "io/status"`,
		},
		"a dotted annotation key without a slash is refused too": {
			in:      "metadata.annotations.example.com",
			wantErr: `parsing path "metadata.annotations.example.com": metadata.annotations values are strings, so nothing lies beneath a key; write a key with dots or slashes in brackets, as messages print it: metadata.annotations[example.com/key]`,
		},
		"an unterminated bracket is refused": {
			in:      "spec.template.spec.containers[name=web.image",
			wantErr: `parsing path "spec.template.spec.containers[name=web.image": unterminated "[name=web.image"`,
		},
		"an empty path is refused": {
			in: "", wantErr: "empty path",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := ParsePattern(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParsePattern(%q) error = %v, want %s", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePattern(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, p.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
			checkCovers(t, p, tc.covers, true)
			checkCovers(t, p, tc.misses, false)
		})
	}
}

func checkCovers(t *testing.T, p Pattern, paths []string, want bool) {
	t.Helper()
	for _, s := range paths {
		path, err := ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Covers(path); got != want {
			t.Errorf("%s.Covers(%s) = %t, want %t", p, s, got, want)
		}
	}
}

func TestPatternFromJSONPointer(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    string
		wantErr string
	}{
		"a field":                             {in: "/spec/replicas", want: "spec.replicas"},
		"an annotation key with an escaped /": {in: "/metadata/annotations/sidecar.istio.io~1status", want: "metadata.annotations[sidecar.istio.io/status]"},
		"an escaped ~":                        {in: "/metadata/labels/a~0b", want: "metadata.labels[a~b]"},
		"a list position is refused": {
			in:      "/spec/template/spec/containers/0/image",
			wantErr: `JSON pointer "/spec/template/spec/containers/0/image": segment "0" is a list position, which differs from object to object; write the path in apply-hygiene's notation with [*] or the element's key, e.g. spec.template.spec.containers[*]`,
		},
		"a * segment is refused: it names a key called *": {
			in:      "/metadata/annotations/*",
			wantErr: `JSON pointer "/metadata/annotations/*": segment "*" names a key literally called *, as Argo CD and Flux read it; for any key write the path in apply-hygiene's notation, e.g. metadata.annotations[*]`,
		},
		"a relative pointer is refused": {in: "spec/replicas", wantErr: `JSON pointer "spec/replicas": must start with /`},
		"an empty segment is refused":   {in: "/spec//replicas", wantErr: `JSON pointer "/spec//replicas": empty segment`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := PatternFromJSONPointer(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("PatternFromJSONPointer(%q) error = %v, want %s", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("PatternFromJSONPointer(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, p.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
		})
	}
}

// factPaths lists the paths of each fact list that an ownership
// declaration filters.
type factPaths struct {
	Drift, Imperative, ApplyOwned, Reverts, Orphans []string
	ReplicasReset                                   bool
}

func pathsOf(a *Analysis) factPaths {
	list := func(fs []FieldFact) []string {
		out := []string{}
		for _, f := range fs {
			out = append(out, f.Path.String())
		}
		return out
	}
	return factPaths{list(a.Drift), list(a.ImperativeChanges), list(a.ApplyOwnedChanges), list(a.Reverts), list(a.Orphans), a.ReplicasReset != nil}
}

func TestWithoutDeclared(t *testing.T) {
	raw, err := testdata.ReadFile("testdata/declared/analysis.json")
	if err != nil {
		t.Fatal(err)
	}
	all := factPaths{
		Drift:         []string{"spec.template.spec.containers[name=web].image"},
		Imperative:    []string{"metadata.annotations[example.com/team]", "spec.replicas"},
		ApplyOwned:    []string{"spec.template.spec.containers[name=sidecar].image"},
		Reverts:       []string{"spec.template.spec.containers[name=web].image", "spec.template.spec.containers[name=web].env[name=LEVEL].value"},
		Orphans:       []string{"metadata.annotations[sidecar.istio.io/status]", "metadata.annotations[example.com/note]"},
		ReplicasReset: true,
	}
	with := func(f func(*factPaths)) factPaths {
		p := all
		f(&p)
		return p
	}
	tests := map[string]struct {
		writer   string
		declared map[string]string // pattern to manager ("" for the cluster)
		want     factPaths
	}{
		"nothing declared keeps every fact": {
			want: all,
		},
		"spec.replicas owned by the cluster is neither an imperative change nor a reset": {
			declared: map[string]string{"spec.replicas": ""},
			want: with(func(p *factPaths) {
				p.Imperative, p.ReplicasReset = []string{"metadata.annotations[example.com/team]"}, false
			}),
		},
		"spec.replicas owned by the autoscaler's manager drops the reset it wrote, not a person's edit": {
			declared: map[string]string{"spec.replicas": "kube-controller-manager"},
			writer:   "kubectl-scale",
			want:     with(func(p *factPaths) { p.ReplicasReset = false }),
		},
		"a manager's own write to its declared field is no imperative change": {
			declared: map[string]string{"spec.replicas": "kubectl-scale"},
			writer:   "kubectl-scale",
			want:     with(func(p *factPaths) { p.Imperative = []string{"metadata.annotations[example.com/team]"} }),
		},
		"a mesh's annotation owned by the cluster is no orphan; another annotation still is": {
			declared: map[string]string{"metadata.annotations[sidecar.istio.io/status]": ""},
			want:     with(func(p *factPaths) { p.Orphans = []string{"metadata.annotations[example.com/note]"} }),
		},
		"every annotation owned by the cluster": {
			declared: map[string]string{"metadata.annotations.*": ""},
			want:     with(func(p *factPaths) { p.Imperative, p.Orphans = []string{"spec.replicas"}, []string{} }),
		},
		"images owned by the deploy robot: its drift and the revert of it go, the env edit stays": {
			declared: map[string]string{"spec.template.spec.containers[*].image": "deploy-bot"},
			want: with(func(p *factPaths) {
				p.Drift, p.Reverts = []string{}, []string{"spec.template.spec.containers[name=web].env[name=LEVEL].value"}
			}),
		},
		"images owned by another manager keep the robot's drift and revert": {
			declared: map[string]string{"spec.template.spec.containers[*].image": "kubectl-set"},
			want:     all,
		},
		"a write by the declared manager to an applier's field is its own": {
			declared: map[string]string{"spec.template.spec.containers[name=sidecar]": "istio-sidecar-injector"},
			writer:   "istio-sidecar-injector",
			want:     with(func(p *factPaths) { p.ApplyOwned = []string{} }),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var an Analysis
			if err := json.Unmarshal(raw, &an); err != nil {
				t.Fatal(err)
			}
			before := pathsOf(&an)
			var ds []Declared
			for s, m := range tc.declared {
				p, err := ParsePattern(s)
				if err != nil {
					t.Fatal(err)
				}
				ds = append(ds, Declared{Pattern: p, Manager: m})
			}
			got := an.WithoutDeclared(tc.writer, ds)
			if diff := cmp.Diff(tc.want, pathsOf(got)); diff != "" {
				t.Errorf("facts left (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, pathsOf(&an)); diff != "" {
				t.Errorf("WithoutDeclared changed its receiver (-before +after):\n%s", diff)
			}
		})
	}
}

// FuzzParsePattern: any text either fails to parse or gives a pattern that
// String writes back into the same pattern, and JSON pointers never panic.
func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"spec.replicas", "metadata.annotations[sidecar.istio.io/status]", "spec.template.spec.containers[*].image",
		"metadata.annotations.*", "*", `spec.containers[name="a,b"].ports[containerPort=80,protocol=TCP]`, "metadata.finalizers[=a]", "/spec/replicas", "a[0]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := PatternFromJSONPointer(s); err != nil && err.Error() == "" {
			t.Fatalf("PatternFromJSONPointer(%q): empty error", s)
		}
		if !utf8.ValidString(s) {
			return // keys are quoted as JSON strings, which hold UTF-8 only
		}
		p, err := ParsePattern(s)
		if err != nil {
			return
		}
		again, err := ParsePattern(p.String())
		if err != nil {
			t.Fatalf("ParsePattern(%q).String() = %q, which does not parse: %v", s, p.String(), err)
		}
		if again.String() != p.String() || len(again.path) != len(p.path) {
			t.Fatalf("ParsePattern(%q) = %q, parsed again %q", s, p.String(), again.String())
		}
	})
}
