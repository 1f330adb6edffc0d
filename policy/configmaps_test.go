package policy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

const policyNamespace = "apply-hygiene"

func policyConfigMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: policyNamespace, Labels: map[string]string{ConfigMapLabel: ConfigMapLabelValue}},
		Data:       data,
	}
}

// configMapFixture runs a ConfigMapSource on a fake API with an engine that
// also has a policy directory.
type configMapFixture struct {
	engine *Engine
	client *fake.Clientset
	source *ConfigMapSource
}

func startConfigMapSource(t *testing.T, objects ...*corev1.ConfigMap) configMapFixture {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "direct.rego"), []byte(directDecision), 0o644); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	for _, cm := range objects {
		if _, err := client.CoreV1().ConfigMaps(cm.Namespace).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	engine := newEngine(t, WithDirs(dir), WithDebounce(10*time.Millisecond))
	source := NewConfigMapSource(engine, client, policyNamespace)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- source.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	waitFor(t, "the first sync", func() bool { return source.ReadyCheck(nil) == nil })
	return configMapFixture{engine: engine, client: client, source: source}
}

func (f configMapFixture) update(t *testing.T, cm *corev1.ConfigMap) {
	t.Helper()
	cur, err := f.client.CoreV1().ConfigMaps(policyNamespace).Get(t.Context(), cm.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Data = cm.Data
	if _, err := f.client.CoreV1().ConfigMaps(policyNamespace).Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (f configMapFixture) errorAnnotation(t *testing.T, name string) string {
	t.Helper()
	cm, err := f.client.CoreV1().ConfigMaps(policyNamespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.Annotations[ConfigMapErrorAnnotation]
}

func (f configMapFixture) decisions(t *testing.T) []string {
	t.Helper()
	in := loadInput(t, "imperative")
	in.Namespace.Labels = map[string]string{"env": "prod"}
	got, err := f.engine.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	return summary(got)
}

func TestConfigMapSourceLoadsLabelledConfigMaps(t *testing.T) {
	unlabelled := policyConfigMap("other", map[string]string{"x.rego": "not Rego at all"})
	unlabelled.Labels = nil
	f := startConfigMapSource(t,
		policyConfigMap("prod-rules", map[string]string{"no-edit.rego": noEditInProd, "no-edit_test.rego": "tests are left out"}),
		unlabelled)

	var got []string
	for _, m := range f.engine.Status().Modules {
		if strings.HasPrefix(m, "configmap/") {
			got = append(got, m)
		}
	}
	if diff := cmp.Diff([]string{"configmap/prod-rules/no-edit.rego"}, got); diff != "" {
		t.Errorf("modules from ConfigMaps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"imperative-edit=deny", "no-edit-in-prod=deny", "tell-alice=warn"}, f.decisions(t)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}

// A broken ConfigMap is marked with file:line, the last good set keeps
// deciding, and fixing it loads it and removes the mark.
func TestConfigMapSourceMarksBrokenConfigMapAndKeepsLastGoodSet(t *testing.T) {
	f := startConfigMapSource(t, policyConfigMap("prod-rules", map[string]string{"no-edit.rego": noEditInProd}))
	good := f.engine.Status().Version

	f.update(t, policyConfigMap("prod-rules", map[string]string{"no-edit.rego": "package applyhygiene.rules.broken\n\nx := {\n"}))
	waitFor(t, "the error annotation", func() bool { return f.errorAnnotation(t, "prod-rules") != "" })
	if got, want := f.errorAnnotation(t, "prod-rules"), "configmap/prod-rules/no-edit.rego:4: rego_parse_error: "; !strings.HasPrefix(got, want) {
		t.Errorf("annotation = %q, want it to start with %q", got, want)
	}
	if st := f.engine.Status(); st.Version != good || st.LastError == nil {
		t.Errorf("status = version %d, error %v; want version %d and the load error", st.Version, st.LastError, good)
	}
	if diff := cmp.Diff([]string{"imperative-edit=deny", "no-edit-in-prod=deny", "tell-alice=warn"}, f.decisions(t)); diff != "" {
		t.Errorf("decisions of the last good set (-want +got):\n%s", diff)
	}

	f.update(t, policyConfigMap("prod-rules", map[string]string{"no-edit.rego": strings.ReplaceAll(noEditInProd, `"deny"`, `"warn"`)}))
	waitFor(t, "the annotation to go", func() bool { return f.errorAnnotation(t, "prod-rules") == "" })
	if st := f.engine.Status(); st.Version != good+1 || st.LastError != nil {
		t.Errorf("status = version %d, error %v; want version %d and no error", st.Version, st.LastError, good+1)
	}
	if diff := cmp.Diff([]string{"imperative-edit=deny", "no-edit-in-prod=warn", "tell-alice=warn"}, f.decisions(t)); diff != "" {
		t.Errorf("decisions after the fix (-want +got):\n%s", diff)
	}
}

// Deleting the ConfigMap unloads its modules and keeps the directories'.
func TestConfigMapSourceUnloadsDeletedConfigMap(t *testing.T) {
	f := startConfigMapSource(t, policyConfigMap("prod-rules", map[string]string{"no-edit.rego": noEditInProd}))
	err := f.client.CoreV1().ConfigMaps(policyNamespace).Delete(t.Context(), "prod-rules", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reload", func() bool { return len(f.decisions(t)) == 2 })
	if diff := cmp.Diff([]string{"imperative-edit=deny", "tell-alice=warn"}, f.decisions(t)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}
