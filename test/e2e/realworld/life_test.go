package realworld_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// lastAppliedKey is the annotation of client-side apply.
const lastAppliedKey = "kubectl.kubernetes.io/last-applied-configuration"

// life is one workload going through its day, in its own namespace. It
// keeps the truth model: the manifest as last written and the fields the
// harness planted outside apply.
type life struct {
	t      *testing.T
	f      *framework.Framework
	w      workload
	ledger *ledger
	// manifest is the manifest the next apply sends.
	manifest map[string]any
	// changes counts the generated changes made to the manifest.
	changes int
	// planted holds the fields set outside apply that are still live,
	// by their path in kubectl's notation.
	planted map[string]fieldPath
	// predict, when set, is called before each apply with the manifest
	// it sends; what it returns is called with kubectl's result
	// (framework.Predictor, in TestRealWorld).
	predict func(step string, manifest []byte) func(framework.Result)
}

// object names the object as apply-hygiene's messages do: "Kind ns/name",
// or "Kind name" when it is cluster-scoped.
func (l *life) object() string {
	if l.w.clusterScoped {
		return fmt.Sprintf("%s %s", l.w.kind, l.w.name)
	}
	return fmt.Sprintf("%s %s/%s", l.w.kind, l.f.Namespace, l.w.name)
}

// get reads the live object as JSON; nil when there is none.
func (l *life) get(ctx context.Context) (map[string]any, error) {
	raw, err := l.f.Client.CoreV1().RESTClient().Get().AbsPath(l.w.urlPath(l.f.Namespace)).DoRaw(ctx)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("getting %s: %w", l.w.ref(), err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", l.w.ref(), err)
	}
	return obj, nil
}

// live reads the live object or fails the subtest.
func (l *life) live() map[string]any {
	l.t.Helper()
	obj, err := l.get(l.t.Context())
	if err != nil {
		l.t.Fatal(err)
	}
	return obj
}

// lastApplied decodes the last-applied annotation of obj; nil when there
// is none or it is not JSON.
func lastApplied(obj map[string]any) map[string]any {
	v, _ := path("metadata", "annotations").Key(lastAppliedKey).Lookup(obj)
	s, _ := v.(string)
	var la map[string]any
	if json.Unmarshal([]byte(s), &la) != nil {
		return nil
	}
	return la
}

// run runs one kubectl command of the day and records what it reported
// against want. A command that fails for another reason than a denial of
// apply-hygiene fails the subtest.
func (l *life) run(step string, want expectation, stdin string, args ...string) framework.Result {
	l.t.Helper()
	res := l.f.Kubectl.RunWithInput(l.t, stdin, args...)
	return check(l.t, l.ledger, l.object(), step, want, res)
}

// check records the findings of one command against want; it fails t when
// the command failed and no denial explains it.
func check(t *testing.T, lg *ledger, object, step string, want expectation, res framework.Result) framework.Result {
	t.Helper()
	got, others := parseOutput(object, res.Stderr)
	ms := compare(want, got)
	command := "kubectl " + strings.Join(res.Args, " ")
	for i := range ms {
		ms[i].Object, ms[i].Step, ms[i].Command = object, step, command
	}
	lg.record(ms, others)
	if res.ExitCode != 0 && !hasDenial(got) {
		t.Errorf("%s: step %q: %s: exit %d\n%s", object, step, command, res.ExitCode, res.Stderr)
	}
	return res
}

func hasDenial(got []reported) bool {
	for _, r := range got {
		if r.Action == deny {
			return true
		}
	}
	return false
}

// apply sends the manifest with kubectl apply and checks the findings
// against the truth model: the planted fields, the live object before and
// after, and last-applied before.
func (l *life) apply(step string) framework.Result {
	l.t.Helper()
	doc, err := json.Marshal(l.manifest)
	if err != nil {
		l.t.Fatalf("encoding the manifest of %s: %v", l.w.ref(), err)
	}
	var predicted func(framework.Result)
	if l.predict != nil {
		predicted = l.predict(step, doc)
	}
	before := l.live()
	res := l.f.Kubectl.RunWithInput(l.t, string(doc), "apply", "-f", "-")
	if predicted != nil {
		predicted(res)
	}
	after := l.live()
	want := l.afterApply(before, after)
	if strings.HasSuffix(strings.TrimSpace(res.Stdout), " unchanged") {
		// kubectl sent nothing: nobody could report anything.
		want = nothing
	}
	res.Args = []string{"apply", "-f", l.w.file}
	check(l.t, l.ledger, l.object(), step, want, res)
	l.settle(after)
	return res
}

// changedApply makes the next generated change to the manifest, one that
// is legal for every workload: a pod-template label with a new value. Then
// it applies.
func (l *life) changedApply(step string) framework.Result {
	l.t.Helper()
	l.changes++
	labels := ensureMap(l.manifest, "spec", "template", "metadata", "labels")
	labels[changeLabel] = fmt.Sprint(l.changes)
	return l.apply(step)
}

// changeLabel is the pod-template label of the generated changes.
const changeLabel = "apply-hygiene.io/change"

// waitObserved waits until the controller has seen the newest spec, so
// that the revision of the current pod template exists.
func (l *life) waitObserved() {
	l.t.Helper()
	framework.Eventually(l.t, 30*time.Second, "the controller to observe "+l.w.ref(), func(ctx context.Context) (bool, error) {
		obj, err := l.get(ctx)
		if err != nil {
			return false, err
		}
		gen, _ := generationPath.Lookup(obj)
		seen, _ := path("status", "observedGeneration").Lookup(obj)
		g, _ := gen.(float64)
		s, _ := seen.(float64)
		return s >= g, nil
	})
}
