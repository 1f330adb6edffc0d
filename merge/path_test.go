package merge

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

func TestPathRoundTrip(t *testing.T) {
	tests := map[string]struct {
		path fieldpath.Path
		want string
	}{
		"struct fields join with dots": {
			path: fieldpath.MakePathOrDie("spec", "replicas"), want: "spec.replicas",
		},
		"list elements are keyed by their merge key": {
			path: fieldpath.MakePathOrDie("spec", "containers", fieldpath.KeyByFields("name", "nginx"), "env", fieldpath.KeyByFields("name", "A")),
			want: "spec.containers[name=nginx].env[name=A]",
		},
		"several keys are sorted and numbers stay numbers": {
			path: fieldpath.MakePathOrDie("ports", fieldpath.KeyByFields("protocol", "TCP", "containerPort", 80)),
			want: "ports[containerPort=80,protocol=TCP]",
		},
		"map keys with dots and slashes go in brackets": {
			path: fieldpath.MakePathOrDie("metadata", "annotations", "kubectl.kubernetes.io/restartedAt"),
			want: "metadata.annotations[kubectl.kubernetes.io/restartedAt]",
		},
		"map keys with brackets, equals signs or quotes are quoted": {
			path: fieldpath.MakePathOrDie("data", `a=b]"c`), want: `data["a=b]\"c"]`,
		},
		"numeric map keys are quoted so they are no index": {
			path: fieldpath.MakePathOrDie("data", "0"), want: `data["0"]`,
		},
		"set elements are written with a leading equals sign": {
			path: fieldpath.MakePathOrDie("metadata", "finalizers", value.NewValueInterface("example.com/x")),
			want: "metadata.finalizers[=example.com/x]",
		},
		"string values that look like numbers are quoted": {
			path: fieldpath.MakePathOrDie("env", fieldpath.KeyByFields("name", "80")), want: `env[name="80"]`,
		},
		"indexes of lists without keys are numbers": {
			path: fieldpath.MakePathOrDie("args", 2), want: "args[2]",
		},
		"a map key first is written in brackets": {
			path: fieldpath.MakePathOrDie("a.b", "c"), want: "[a.b].c",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Path(tc.path).String()
			if got != tc.want {
				t.Fatalf("String() = %q, want %q", got, tc.want)
			}
			parsed, err := ParsePath(got)
			if err != nil {
				t.Fatal(err)
			}
			if !parsed.FieldPath().Equals(tc.path) {
				t.Errorf("ParsePath(%q) = %v, want %v", got, parsed.FieldPath(), tc.path)
			}
			data, err := json.Marshal(parsed)
			if err != nil {
				t.Fatal(err)
			}
			var back Path
			if err := json.Unmarshal(data, &back); err != nil || back.String() != tc.want {
				t.Errorf("JSON round trip = %q, %v", back.String(), err)
			}
		})
	}
}

func TestParsePathErrors(t *testing.T) {
	tests := map[string]struct{ in string }{
		"an unterminated bracket":    {in: "spec[name=a"},
		"empty brackets":             {in: "spec[]"},
		"a dot at the start":         {in: ".spec"},
		"a bad quoted key":           {in: `spec["a]`},
		"a key part without a value": {in: "spec[name=a,b]"},
		"an invalid field after dot": {in: "spec.a/b"},
		"text after brackets":        {in: "spec[a]b"},
		"an empty key value":         {in: "spec[name=]"},
		"a bad quoted key value":     {in: `spec[name="a]`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if p, err := ParsePath(tc.in); err == nil {
				t.Errorf("ParsePath(%q) = %v, want an error", tc.in, p)
			}
		})
	}
}

func TestJSONPointer(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "a"},
		map[string]any{"name": "b", "env": []any{map[string]any{"name": "X"}, map[string]any{"name": "Y"}}},
	}}, "metadata": map[string]any{"annotations": map[string]any{"a/b~c": "1"}}}
	tests := map[string]struct {
		path string
		want string
		ok   bool
	}{
		"list elements resolve to their index": {path: "spec.containers[name=b].env[name=Y]", want: "/spec/containers/1/env/1", ok: true},
		"slashes and tildes are escaped":       {path: "metadata.annotations[a/b~c]", want: "/metadata/annotations/a~1b~0c", ok: true},
		"a missing element has no pointer":     {path: "spec.containers[name=c]"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := JSONPointer(obj, mustPath(t, tc.path))
			if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.ok {
				t.Errorf("JSONPointer (-want +got):\n%s ok=%v", diff, ok)
			}
		})
	}
}
