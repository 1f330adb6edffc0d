package realworld_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The harness reads the paths out of the messages of policy/rules/*.rego
// as kubectl prints them.
func TestParseOutput(t *testing.T) {
	const object = "Deployment ns/web"
	tests := map[string]struct {
		stderr     string
		want       []finding
		wantOthers []string
	}{
		"an orphan warning names its field": {
			stderr: `Warning: [orphaned-field] Deployment ns/web: spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] ("2024-01-01T00:00:00Z", set by kubectl-rollout at 2024-01-01T00:00:00Z) is in neither your manifest nor last-applied, so kubectl apply will never remove it. Remove it with: kubectl patch deployment/web -n ns --type=json -p '[]'`,
			want:   []finding{{warn, "orphaned-field", "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"}},
		},
		"a revert that sets a value back": {
			stderr: `Warning: [apply-reverts-drift] Deployment ns/web: this apply sets spec.template.metadata.labels[apply-hygiene.io/change] back to "4", discarding "3" set by kubectl at 2024-01-01T00:00:00Z since the last apply. To keep that value, put it in your manifest before you apply; see every drifted field with: kubectl hygiene explain deployment/web -n ns`,
			want:   []finding{{warn, "apply-reverts-drift", "spec.template.metadata.labels[apply-hygiene.io/change]"}},
		},
		"a revert that removes a field": {
			stderr: `Warning: [apply-reverts-drift] Deployment ns/web: this apply removes spec.template.spec.containers[name=app].env[name=A], discarding {"name":"A","value":"1"} set by kubectl-set at 2024-01-01T00:00:00Z since the last apply. To keep…`,
			want:   []finding{{warn, "apply-reverts-drift", "spec.template.spec.containers[name=app].env[name=A]"}},
		},
		"a denial lists every changed field, and kubectl's own warning is another": {
			stderr: "Warning: resource deployments/web was previously managed with 'kubectl apply'.\n" +
				`error: failed to patch image update to pod template: admission webhook "validate.apply-hygiene.io" denied the request: [imperative-edit] Deployment ns/web: this write by admin (field manager kubectl-set) changes fields that last-applied owns: spec.replicas (last-applied 3, now 5), spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.99"); the next kubectl apply puts the last-applied values back without a word.`,
			want: []finding{
				{deny, "imperative-edit", "spec.replicas"},
				{deny, "imperative-edit", "spec.template.spec.containers[name=nginx].image"},
			},
			wantOthers: []string{"Warning: resource deployments/web was previously managed with 'kubectl apply'."},
		},
		"a rule without a single field": {
			stderr: "Warning: [stale-last-applied] Deployment ns/web: rollout undo restored revision 1 but …",
			want:   []finding{{warn, "stale-last-applied", ""}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, others := parseOutput(object, tc.stderr)
			var findings []finding
			for _, r := range got {
				findings = append(findings, r.finding)
			}
			if diff := cmp.Diff(tc.want, findings, cmp.AllowUnexported(finding{})); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOthers, others); diff != "" {
				t.Errorf("other warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// compare tells false findings from misses; a finding that is allowed but
// not wanted is neither.
func TestCompare(t *testing.T) {
	restarted := orphan(templatePath.key("metadata").key("annotations").key(restartedAt))
	stale := finding{warn, "stale-last-applied", ""}
	tests := map[string]struct {
		want expectation
		got  []reported
		what []string
	}{
		"the expected findings, each once": {
			want: expectation{want: []finding{restarted}},
			got:  []reported{{restarted, "a"}, {restarted, "a"}},
		},
		"an allowed finding, present or not": {
			want: expectation{allowed: []finding{stale}},
			got:  []reported{{stale, "b"}},
		},
		"a false warning, a false denial and a miss": {
			want: expectation{want: []finding{restarted}},
			got:  []reported{{finding{warn, "orphaned-field", "spec.x"}, "c"}, {finding{deny, "imperative-edit", "spec.y"}, "d"}},
			what: []string{falseWarning, falseDenial, miss},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var what []string
			for _, m := range compare(tc.want, tc.got) {
				what = append(what, m.what)
			}
			if diff := cmp.Diff(tc.what, what); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
		})
	}
}

// The truth model of an apply, on the objects of a day.
func TestAfterApply(t *testing.T) {
	restarted := templatePath.key("metadata").key("annotations").key(restartedAt)
	env := containersPath.named("app").key("env").named(addedEnv)
	label := templatePath.key("metadata").key("labels").key(changeLabel)
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
			if diff := cmp.Diff(tc.want, got.want, cmp.AllowUnexported(finding{})); diff != "" {
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
			if _, ok := path("spec", "selector").lookup(w.manifest); !ok {
				t.Errorf("%s has no spec.selector: not a complete manifest (a kustomize base?)", w.id())
			}
			v, _ := containersPath.lookup(w.manifest)
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
	lg.record([]mismatch{{what: miss}}, nil)
	want := "realworld: 4 objects (1 workloads, 3 others: 2 Service, 1 ConfigMap) from 3 projects, 1 steps, 0 false warnings, 0 false denials, 1 misses"
	if got := lg.summary(); got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
}
