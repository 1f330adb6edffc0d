package merge

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An apply deletes what a last-applied that recorded the whole object has
// and the manifest lacks: the server's defaults go back into the result,
// as the API server defaults them again, and so does its own metadata,
// which no patch changes; a field that is no default, or whose map the
// apply deletes, stays deleted.
func TestWithDeletedDefaults(t *testing.T) {
	// ds is a DaemonSet whose pod spec and metadata hold the JSON members
	// spec and meta.
	ds := func(meta, spec string) string {
		return `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"exporter"` + meta + `},"spec":{"selector":{"matchLabels":{"app":"x"}},` +
			`"template":{"metadata":{"labels":{"app":"x"}},"spec":{` + spec + `}}}}`
	}
	const app = `"containers":[{"name":"app","image":"exporter:1"`
	tests := map[string]struct{ live, result, want string }{
		"a container's defaults": {
			live:   ds("", app+`,"imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log"}],"dnsPolicy":"ClusterFirst"`),
			result: ds("", app+`}]`),
			want:   ds("", app+`,"imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log"}],"dnsPolicy":"ClusterFirst"`),
		},
		"a value other than the default stays deleted": {
			live:   ds("", app+`,"imagePullPolicy":"Always","terminationMessagePath":"/tmp/log"}],"dnsPolicy":"Default"`),
			result: ds("", app+`}]`),
			want:   ds("", app+`}]`),
		},
		"a default that follows from a sibling follows the result's": {
			live:   ds("", app+`,"imagePullPolicy":"IfNotPresent"}]`),
			result: ds("", `"containers":[{"name":"app","image":"exporter:latest"}]`),
			want:   ds("", `"containers":[{"name":"app","image":"exporter:latest"}]`),
		},
		"a container the apply deletes takes its defaults": {
			live:   ds("", app+`},{"name":"side","image":"side:1","imagePullPolicy":"IfNotPresent"}]`),
			result: ds("", app+`}]`),
			want:   ds("", app+`}]`),
		},
		"inside an atomic fieldRef and a hostPath": {
			live: ds("", app+`,"env":[{"name":"IP","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"status.podIP"}}}]}],`+
				`"volumes":[{"name":"sys","hostPath":{"path":"/sys","type":""}}]`),
			result: ds("", app+`,"env":[{"name":"IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}}]}],"volumes":[{"name":"sys","hostPath":{"path":"/sys"}}]`),
			want: ds("", app+`,"env":[{"name":"IP","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"status.podIP"}}}]}],`+
				`"volumes":[{"name":"sys","hostPath":{"path":"/sys","type":""}}]`),
		},
		"the server's metadata and the DaemonSet's generation": {
			live: ds(`,"uid":"u-1","creationTimestamp":"2026-11-29T15:41:13Z","resourceVersion":"499","generation":8,`+
				`"annotations":{"deprecated.daemonset.template.generation":"8","team":"a"}`, app+`}]`),
			result: ds(`,"annotations":{}`, app+`}]`),
			want: ds(`,"uid":"u-1","creationTimestamp":"2026-11-29T15:41:13Z","resourceVersion":"499","generation":8,`+
				`"annotations":{"deprecated.daemonset.template.generation":"8"}`, app+`}]`),
		},
	}
	tests["a custom resource named like a built-in kind has no built-in defaults"] = struct{ live, result, want string }{
		live:   strings.Replace(tests["a container's defaults"].live, `"apps/v1"`, `"example.com/v1"`, 1),
		result: strings.Replace(tests["a container's defaults"].result, `"apps/v1"`, `"example.com/v1"`, 1),
		want:   strings.Replace(tests["a container's defaults"].result, `"apps/v1"`, `"example.com/v1"`, 1),
	}
	a := NewAnalyzer()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live, result, want := unstructuredOf(t, tc.live), unstructuredOf(t, tc.result), unstructuredOf(t, tc.want)
			before := result.DeepCopy()
			got, err := a.WithDeletedDefaults(live, result)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, result.Object); diff != "" {
				t.Errorf("the result given changed (-before +after):\n%s", diff)
			}
			if strings.Contains(name, "stays deleted") && got != result {
				t.Errorf("nothing went back, but a copy was made")
			}
		})
	}
}
