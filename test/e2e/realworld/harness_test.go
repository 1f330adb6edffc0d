package realworld_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The truth model of an apply, on the objects of a day.
func TestAfterApply(t *testing.T) {
	restarted := templatePath.Key("metadata").Key("annotations").Key(restartedAt)
	env := containersPath.Named("app").Key("env").Named(addedEnv)
	label := templatePath.Key("metadata").Key("labels").Key(changeLabel)
	tests := map[string]struct {
		planted       []fieldPath
		manifest, la  string
		before, after string
		want          []finding
	}{
		"planted fields the apply keeps are orphans": {
			planted:  []fieldPath{restarted, env},
			manifest: `{"spec":{"template":{"spec":{"containers":[{"name":"app"}]}}}}`,
			la:       `{"spec":{"template":{"spec":{"containers":[{"name":"app"}]}}}}`,
			before:   `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"t"}},"spec":{"containers":[{"name":"app","env":[{"name":"HYGIENE_ADDED","value":"1"}]}]}}}}`,
			after:    `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"t"}},"spec":{"containers":[{"name":"app","env":[{"name":"HYGIENE_ADDED","value":"1"}]}]}}}}`,
			want:     []finding{orphan(restarted), orphan(env)},
		},
		"a planted field the apply removes is a revert": {
			planted:  []fieldPath{restarted},
			manifest: `{"spec":{"template":{"metadata":{"annotations":null}}}}`,
			la:       `{"spec":{"template":{"metadata":{"annotations":null}}}}`,
			before:   `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"t"}}}}}`,
			after:    `{"spec":{"template":{"metadata":{}}}}`,
			want:     []finding{revert(restarted)},
		},
		"a value an undo restored is a revert when last-applied was not repaired": {
			planted:  []fieldPath{label},
			manifest: `{"spec":{"template":{"metadata":{"labels":{"apply-hygiene.io/change":"4"}}}}}`,
			la:       `{"spec":{"template":{"metadata":{"labels":{"apply-hygiene.io/change":"4"}}}}}`,
			before:   `{"spec":{"template":{"metadata":{"labels":{"apply-hygiene.io/change":"3"}}}}}`,
			after:    `{"spec":{"template":{"metadata":{"labels":{"apply-hygiene.io/change":"4"}}}}}`,
			want:     []finding{revert(label)},
		},
		"a value an undo restored is no revert once last-applied was repaired": {
			planted:  []fieldPath{label},
			manifest: `{"spec":{"template":{"metadata":{"labels":{"apply-hygiene.io/change":"4"}}}}}`,
			la:       `{"spec":{"template":{"metadata":{"labels":{"apply-hygiene.io/change":"3"}}}}}`,
			before:   `{"spec":{"template":{"metadata":{"labels":{"apply-hygiene.io/change":"3"}}}}}`,
			after:    `{"spec":{"template":{"metadata":{"labels":{"apply-hygiene.io/change":"4"}}}}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := &life{manifest: decode(t, tc.manifest)}
			for _, p := range tc.planted {
				l.plant(p)
			}
			before := decode(t, tc.before)
			ensureMap(before, "metadata", "annotations")[lastAppliedKey] = tc.la
			got := l.afterApply(before, decode(t, tc.after))
			if diff := cmp.Diff(tc.want, got.Want); diff != "" {
				t.Errorf("expected findings (-want +got):\n%s", diff)
			}
		})
	}
}

// The fields an undo changed, as apply-hygiene's messages name them.
func TestChangedPaths(t *testing.T) {
	before := `{"metadata":{"labels":{"app":"web","apply-hygiene.io/change":"4"}},"spec":{"containers":[{"name":"app","image":"a:2","env":[{"name":"A","value":"1"}],"ports":[{"containerPort":80}]}]}}`
	after := `{"metadata":{"labels":{"app":"web","apply-hygiene.io/change":"3"}},"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"ports":[{"containerPort":81}]}]}}`
	var got []string
	for _, p := range changedPaths(templatePath, decode(t, before), decode(t, after)) {
		got = append(got, p.String())
	}
	want := []string{
		"spec.template.metadata.labels[apply-hygiene.io/change]",
		"spec.template.spec.containers[name=app].env[name=B]",
		"spec.template.spec.containers[name=app].image",
		"spec.template.spec.containers[name=app].ports",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changed paths (-want +got):\n%s", diff)
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return obj
}

// The corpus is broad enough, and every manifest holds at least one object
// the harness takes; every workload is complete (a selector: not a
// kustomize base) with a container to set env and image on.
func TestCorpus(t *testing.T) {
	if ws := loadCorpus(t); len(ws) < minWorkloads || projects(ws) < minProjects {
		t.Errorf("the corpus has %d workloads from %d projects, want at least %d from %d",
			len(ws), projects(ws), minWorkloads, minProjects)
	}
	if others := loadOthers(t); len(others) < minOthers {
		t.Errorf("the corpus has %d objects of other kinds, want at least %d", len(others), minOthers)
	}
	var all []document
	for _, file := range corpusFiles(t) {
		ds, err := readDocuments(file)
		if err != nil {
			t.Fatalf("reading %s: %v", file, err)
		}
		all = append(all, ds...)
	}
	custom := customKinds(all)
	for _, file := range corpusFiles(t) {
		ws, err := readWorkloads(file)
		if err != nil {
			t.Errorf("reading %s: %v", file, err)
			continue
		}
		takes := func(d document) bool { _, ok := asOther(d, custom); return ok }
		if ds, _ := readDocuments(file); len(ws) == 0 && !slices.ContainsFunc(ds, takes) {
			t.Errorf("%s has no apps/v1 workload and no object of another kind the harness takes", file)
		}
		for _, w := range ws {
			if _, ok := path("spec", "selector").Lookup(w.manifest); !ok {
				t.Errorf("%s has no spec.selector: not a complete manifest (a kustomize base?)", w.id())
			}
			v, _ := containersPath.Lookup(w.manifest)
			if list, _ := v.([]any); len(list) == 0 {
				t.Errorf("%s has no containers", w.id())
			}
		}
	}
}

// pickOthers takes the first object of a kind from each project, at most
// maxPerKind of a kind, a cluster-scoped name once, and custom resources
// of the corpus's CRDs only.
func TestPickOthers(t *testing.T) {
	doc := func(project, apiVersion, kind, name string) document {
		return document{project: project, file: project + "/f.yaml", obj: map[string]any{
			"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": "x"}}}
	}
	crd := doc("c", "apiextensions.k8s.io/v1", crdKind, "widgets.example.com")
	crd.obj["spec"] = map[string]any{"group": "example.com", "scope": "Namespaced",
		"names":    map[string]any{"kind": "Widget", "plural": "widgets"},
		"versions": []any{map[string]any{"name": "v1"}}}
	docs := []document{
		doc("a", "v1", "Service", "s1"), doc("a", "v1", "Service", "s2"), doc("b", "v1", "Service", "s3"),
		doc("c", "v1", "Service", "s4"), doc("d", "v1", "Service", "s5"),
		doc("a", "rbac.authorization.k8s.io/v1", "ClusterRole", "r"), doc("b", "rbac.authorization.k8s.io/v1", "ClusterRole", "r"),
		doc("a", "v1", "Namespace", "kube-system"), doc("a", "storage.k8s.io/v1", "StorageClass", "sc"),
		doc("a", "apps/v1", "Deployment", "web"), crd, doc("c", "example.com/v1", "Widget", "w"),
		doc("c", "other.example.com/v1", "Widget", "w2"),
	}
	var got []string
	for _, o := range pickOthers(docs) {
		got = append(got, fmt.Sprintf("%s %s/%s %s %v", o.project, o.kind, o.name, o.urlPath("ns"), o.manifest["metadata"]))
	}
	want := []string{
		"a Service/s1 /api/v1/namespaces/ns/services/s1 map[name:s1]",
		"b Service/s3 /api/v1/namespaces/ns/services/s3 map[name:s3]",
		"c Service/s4 /api/v1/namespaces/ns/services/s4 map[name:s4]",
		"a ClusterRole/r /apis/rbac.authorization.k8s.io/v1/clusterroles/r map[name:r]",
		"c CustomResourceDefinition/widgets.example.com /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com map[name:widgets.example.com]",
		"c Widget/w /apis/example.com/v1/namespaces/ns/widgets/w map[name:w]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("picked objects (-want +got):\n%s", diff)
	}
}

// The summary line counts the objects of other kinds by kind.
func TestSummary(t *testing.T) {
	var lg ledger
	lg.started(workload{project: "a", file: "a/f.yaml", apiVersion: "apps/v1", kind: "Deployment", name: "web"})
	lg.started(workload{project: "b", file: "b/f.yaml", apiVersion: "v1", kind: "Service", name: "s", plural: "services"})
	lg.started(workload{project: "b", file: "b/f.yaml", apiVersion: "v1", kind: "Service", name: "t", plural: "services"})
	lg.started(workload{project: "c", file: "c/f.yaml", apiVersion: "v1", kind: "ConfigMap", name: "c", plural: "configmaps"})
	lg.record([]mismatch{{What: miss}}, nil)
	want := "realworld: 4 objects (1 workloads, 3 others: 2 Service, 1 ConfigMap) from 3 projects, 1 steps, 0 false warnings, 0 false denials, 1 misses"
	if got := lg.summary(); got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
}
