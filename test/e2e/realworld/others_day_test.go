package realworld_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The fields the day of another kind writes in metadata, which every kind
// has: changeLabel is the label of the generated changes, which
// last-applied owns once applied; addedAnnotation is set outside apply.
const addedAnnotation = "apply-hygiene.io/added"

// Paths of the metadata fields of otherDay.
var (
	changeLabelPath     = path("metadata", "labels").Key(changeLabel)
	addedAnnotationPath = path("metadata", "annotations").Key(addedAnnotation)
	labelsPath          = path("metadata", "labels")
)

// otherDay is the life of a corpus object of another kind than the
// workloads, step by step, in order: what people do to a Service, a
// ConfigMap, a ClusterRole or a custom resource with kubectl.
var otherDay = []struct {
	step string
	do   func(l *life, step string)
}{
	{step: "create", do: (*life).create},
	{step: "change and apply", do: (*life).otherChangedApply},
	{step: "label an owned label", do: (*life).labelOwned},
	{step: "patch an owned label", do: (*life).patchOwned},
	{step: "edit an owned label", do: (*life).editOwned},
	{step: "annotate", do: (*life).annotate},
	{step: "change and apply after annotate", do: (*life).otherChangedApply},
	{step: "apply the same manifest", do: (*life).sameApply},
}

// otherLife takes one object of another kind through its day in a
// namespace of its own, with p predicting each apply. A custom resource
// waits until the corpus's CRD of its kind is established.
func otherLife(t *testing.T, w workload, crds map[string]string, lg *ledger, p *framework.Predictor) {
	lg.started(w)
	l := &life{t: t, f: framework.New(t), w: w, ledger: lg, manifest: runtime.DeepCopyJSON(w.manifest)}
	l.predict = func(step string, manifest []byte) func(framework.Result) { return l.predictWith(p, step, manifest) }
	if crd, ok := crds[w.kindKey()]; ok {
		waitEstablished(t, l.f, crd)
	}
	for _, s := range otherDay {
		s.do(l, s.step)
	}
}

// otherChangedApply makes the next generated change, a new value of the
// change label in metadata, which every kind takes, and applies.
func (l *life) otherChangedApply(step string) {
	l.changes++
	ensureMap(l.manifest, "metadata", "labels")[changeLabel] = fmt.Sprint(l.changes)
	l.apply(step)
}

// sameApply applies the manifest as last applied: kubectl prints that the
// object is unchanged or configured, and the truth model decides the rest.
func (l *life) sameApply(step string) {
	res := l.apply(step)
	out := strings.TrimSpace(res.Stdout)
	if !strings.HasSuffix(out, " unchanged") && !strings.HasSuffix(out, " configured") {
		l.t.Errorf("%s: step %q: kubectl apply printed %q, want unchanged or configured", l.w.id(), step, out)
	}
}

// labelOwned sets the change label, which last-applied owns, with kubectl
// label: denied with imperative-edit, and nothing written.
func (l *life) labelOwned(step string) {
	l.deniedMetaWrite(step, changeLabelPath, nil, "label", "--overwrite", l.w.ref(), changeLabel+"=labelled")
}

// patchOwned sets the change label with kubectl patch: denied.
func (l *life) patchOwned(step string) {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"patched"}}}`, changeLabel)
	l.deniedMetaWrite(step, changeLabelPath, nil, "patch", l.w.ref(), "--type=merge", "-p", patch)
}

// editOwned sets the change label with kubectl edit, the editor being sed
// on the label's line of the YAML kubectl shows: denied.
func (l *life) editOwned(step string) {
	from := fmt.Sprintf(`%s: "%d"`, changeLabel, l.changes)
	script := fmt.Sprintf(`s#%s#%s: edited#`, from, changeLabel)
	env := []string{"KUBE_EDITOR=sed -i -e '" + script + "'"}
	l.deniedMetaWrite(step, changeLabelPath, env, "edit", l.w.ref())
}

// annotate adds an annotation nobody applied with kubectl annotate:
// allowed without a word; it plants the annotation.
func (l *life) annotate(step string) {
	res := l.run(step, nothing, "", "annotate", l.w.ref(), addedAnnotation+"=1")
	if res.ExitCode == 0 {
		l.plant(addedAnnotationPath)
	}
}

// deniedMetaWrite runs a write (with extra environment env) that a correct
// tool denies with imperative-edit at p, and checks that the labels are
// unchanged. A write that went through plants p.
func (l *life) deniedMetaWrite(step string, p fieldPath, env []string, args ...string) {
	l.t.Helper()
	before := l.live()
	k := l.f.Kubectl
	k.Env = append(append([]string{}, k.Env...), env...)
	res := k.Run(l.t, args...)
	check(l.t, l.ledger, l.object(), step, expectation{Want: []finding{edit(p)}}, res)
	after := l.live()
	switch {
	case res.ExitCode == 0:
		l.plant(p)
	case !sameAt(labelsPath, before, after):
		l.t.Errorf("%s: step %q: the denied write changed the labels", l.w.id(), step)
	}
}

// crdsByKind maps "group/version Kind" of each custom resource the corpus
// defines to the name of its CRD.
func crdsByKind(others []workload) map[string]string {
	out := map[string]string{}
	for _, o := range others {
		if o.kind != crdKind {
			continue
		}
		for key := range customKinds([]document{{obj: o.manifest}}) {
			out[key] = o.name
		}
	}
	return out
}

// customResourcesByCRD maps the name of each CRD of the corpus to the
// objects of its custom kinds (crds: crdsByKind).
func customResourcesByCRD(others []workload, crds map[string]string) map[string][]workload {
	out := map[string][]workload{}
	for _, o := range others {
		if crd, ok := crds[o.kindKey()]; ok {
			out[crd] = append(out[crd], o)
		}
	}
	return out
}

// waitEstablished waits until the CRD named name exists and is
// Established: its own day, which the custom resource's follows, created
// it a moment before.
func waitEstablished(t *testing.T, f *framework.Framework, name string) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, "CRD "+name+" to be established", func(ctx context.Context) (bool, error) {
		raw, err := f.Client.CoreV1().RESTClient().Get().
			AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name).DoRaw(ctx)
		if err != nil {
			return false, nil //nolint:nilerr // not created yet: keep waiting
		}
		var crd struct {
			Status struct {
				Conditions []struct{ Type, Status string }
			}
		}
		if err := json.Unmarshal(raw, &crd); err != nil {
			return false, fmt.Errorf("decoding CRD %s: %w", name, err)
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == "Established" && strings.EqualFold(c.Status, "True") {
				return true, nil
			}
		}
		return false, nil
	})
}
