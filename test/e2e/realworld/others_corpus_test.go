package realworld_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The issue asks for at least this many objects of other kinds than the
// apps/v1 workloads; each kind contributes at most maxPerKind objects, one
// per project, so that the corpus stays broad and its run short.
const (
	minOthers  = 25
	maxPerKind = 3
)

// otherKind is a built-in kind of the corpus besides the workloads.
type otherKind struct {
	plural        string
	clusterScoped bool
}

// otherKinds are the built-in kinds whose objects live a day of their own
// (otherDay), by "apiVersion kind".
var otherKinds = map[string]otherKind{
	"v1 Service":                                       {plural: "services"},
	"v1 ConfigMap":                                     {plural: "configmaps"},
	"v1 Secret":                                        {plural: "secrets"},
	"v1 ServiceAccount":                                {plural: "serviceaccounts"},
	"v1 Namespace":                                     {plural: "namespaces", clusterScoped: true},
	"networking.k8s.io/v1 Ingress":                     {plural: "ingresses"},
	"networking.k8s.io/v1 NetworkPolicy":               {plural: "networkpolicies"},
	"batch/v1 CronJob":                                 {plural: "cronjobs"},
	"batch/v1 Job":                                     {plural: "jobs"},
	"autoscaling/v2 HorizontalPodAutoscaler":           {plural: "horizontalpodautoscalers"},
	"policy/v1 PodDisruptionBudget":                    {plural: "poddisruptionbudgets"},
	"rbac.authorization.k8s.io/v1 Role":                {plural: "roles"},
	"rbac.authorization.k8s.io/v1 RoleBinding":         {plural: "rolebindings"},
	"rbac.authorization.k8s.io/v1 ClusterRole":         {plural: "clusterroles", clusterScoped: true},
	"rbac.authorization.k8s.io/v1 ClusterRoleBinding":  {plural: "clusterrolebindings", clusterScoped: true},
	"apiextensions.k8s.io/v1 CustomResourceDefinition": {plural: "customresourcedefinitions", clusterScoped: true},
}

// crdKind is the kind of a CustomResourceDefinition.
const crdKind = "CustomResourceDefinition"

// builtinNamespaces exist in every cluster: applying them is no creation.
var builtinNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true}

// document is one object of a corpus file, before it is picked.
type document struct {
	project, file string
	obj           map[string]any
}

// readDocuments returns every object of a file, items of Lists included.
func readDocuments(file string) ([]document, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, err
	}
	project := filepath.Base(filepath.Dir(file))
	var out []document
	for _, obj := range docs {
		for _, o := range listItems(obj) {
			out = append(out, document{project: project, file: file, obj: o})
		}
	}
	return out, nil
}

// customKinds returns the custom resources the corpus's CRDs define, by
// "group/version kind".
func customKinds(docs []document) map[string]otherKind {
	out := map[string]otherKind{}
	for _, d := range docs {
		if d.obj["apiVersion"] != "apiextensions.k8s.io/v1" || d.obj["kind"] != crdKind {
			continue
		}
		spec, _ := d.obj["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		group, _ := spec["group"].(string)
		kind, _ := names["kind"].(string)
		plural, _ := names["plural"].(string)
		versions, _ := spec["versions"].([]any)
		for _, v := range versions {
			vm, _ := v.(map[string]any)
			if name, _ := vm["name"].(string); name != "" {
				out[group+"/"+name+" "+kind] = otherKind{plural: plural, clusterScoped: spec["scope"] == "Cluster"}
			}
		}
	}
	return out
}

// asOther picks a non-workload object of a known kind and drops its
// namespace.
func asOther(d document, custom map[string]otherKind) (workload, bool) {
	apiVersion, _ := d.obj["apiVersion"].(string)
	kind, _ := d.obj["kind"].(string)
	k, ok := otherKinds[apiVersion+" "+kind]
	if !ok {
		k, ok = custom[apiVersion+" "+kind]
	}
	meta, _ := d.obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if !ok || name == "" || (kind == "Namespace" && builtinNamespaces[name]) {
		return workload{}, false
	}
	delete(meta, "namespace")
	return workload{project: d.project, file: d.file, apiVersion: apiVersion, kind: kind, name: name,
		plural: k.plural, clusterScoped: k.clusterScoped, manifest: d.obj}, true
}

// loadOthers reads the objects of other kinds than the workloads that the
// corpus lives through: in file order, the first object of each kind from
// each project, at most maxPerKind of a kind, and a cluster-scoped name
// only once.
func loadOthers(t *testing.T) []workload {
	t.Helper()
	var docs []document
	for _, file := range corpusFiles(t) {
		ds, err := readDocuments(file)
		if err != nil {
			t.Fatalf("reading %s: %v", file, err)
		}
		docs = append(docs, ds...)
	}
	return pickOthers(docs)
}

// pickOthers selects the objects of loadOthers from docs.
func pickOthers(docs []document) []workload {
	custom := customKinds(docs)
	perKind := map[string]int{}
	taken := map[string]bool{}
	var out []workload
	for _, d := range docs {
		o, ok := asOther(d, custom)
		if !ok || perKind[o.kind] >= maxPerKind {
			continue
		}
		fromProject, named := o.kind+" "+o.project, o.kind+" "+o.name
		if taken[fromProject] || (o.clusterScoped && taken[named]) {
			continue
		}
		taken[fromProject], taken[named] = true, true
		perKind[o.kind]++
		out = append(out, o)
	}
	return out
}

// kindCounts renders "N Kind" for each kind of ws, most frequent first.
func kindCounts(kinds map[string]int) string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if kinds[names[i]] != kinds[names[j]] {
			return kinds[names[i]] > kinds[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%d %s", kinds[k], k)
	}
	return strings.Join(parts, ", ")
}

// Every CRD and custom resource the corpus lives through is among the
// extra kinds the chart is installed with, scoped as it is.
func TestExtraKindValues(t *testing.T) {
	for _, o := range loadOthers(t) {
		if k, builtin := otherKinds[o.kindKey()]; builtin && k.plural != "customresourcedefinitions" {
			continue
		}
		group, version, _ := strings.Cut(o.apiVersion, "/")
		found := false
		for i, v := range extraKindValues {
			entry := fmt.Sprintf("extraKinds[%d].group=%s,extraKinds[%d].version=%s,extraKinds[%d].resource=%s", i, group, i, version, i, o.resource())
			if o.clusterScoped {
				entry += fmt.Sprintf(",extraKinds[%d].scope=Cluster", i)
			}
			found = found || v == entry
		}
		if !found {
			t.Errorf("%s: extraKindValues do not add %s %s", o.id(), o.apiVersion, o.resource())
		}
	}
}
