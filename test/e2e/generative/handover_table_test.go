package generative_test

import (
	"slices"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// TestEditLastAppliedHandsOverAField holds the hand-over writer to what
// a person does: kubectl apply edit-last-applied whose editor deletes one
// field of the manifest from last-applied (spelled for jq whatever the
// key), never a selector or the pod template's labels; the manifest
// loses the field only when the write passed, and the object gets no new
// pod template.
func TestEditLastAppliedHandsOverAField(t *testing.T) {
	deployment := object{kind: "Deployment", name: "web", manifest: map[string]any{
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"spec": map[string]any{"replicas": 2.0, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}}},
	}}
	configMap := object{kind: "ConfigMap", name: "c", manifest: map[string]any{
		"metadata": map[string]any{"name": "c", "annotations": map[string]any{"team": "a"}},
		"data":     map[string]any{"k": "v"},
	}}
	bare := object{kind: "Service", name: "s", manifest: map[string]any{"metadata": map[string]any{"name": "s"}, "spec": map[string]any{}}}
	daemonSet := object{kind: "DaemonSet", name: "d", manifest: map[string]any{
		"metadata": map[string]any{"name": "d"}, "spec": map[string]any{"replicas": 1.0},
	}}
	tests := []struct {
		name string
		o    object
		want [][]string
	}{
		{"a Deployment: its replicas and its own label", deployment, [][]string{{"spec", "replicas"}, {"metadata", "labels", "app.kubernetes.io/name"}}},
		{"a ConfigMap: its annotation and its key", configMap, [][]string{{"metadata", "annotations", "team"}, {"data", "k"}}},
		{"nothing to hand over", bare, nil},
		{"replicas only where the kind scales", daemonSet, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGen(1, tc.o)
			g.lastApplied = true
			if got := g.handOverable(); !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("handOverable() = %q, want %q", got, tc.want)
			}
			fits := handoverWriters[0].fits(g)
			if fits != (len(tc.want) > 0) {
				t.Fatalf("fits = %v with %d fields to hand over", fits, len(tc.want))
			}
			if !fits {
				return
			}
			s := g.editLastApplied()
			if !slices.Equal(s.Args[:4], []string{"apply", "edit-last-applied", tc.o.ref(), "-o"}) || !s.RewritesLastApplied || s.As != alice {
				t.Fatalf("step = %+v, want alice's kubectl apply edit-last-applied %s -o json that rewrites last-applied", s, tc.o.ref())
			}
			p := g.handingOver[0]
			if want := "del(" + jqPath(p) + ")"; s.Edit != want {
				t.Fatalf("editor's filter = %s, want %s", s.Edit, want)
			}
			s.Writer = editLastApplied
			templates := g.templates
			g.observe(s, false)
			if _, ok := framework.Path(p...).Lookup(g.manifest); !ok {
				t.Fatalf("a failed hand-over dropped %q from the manifest", p)
			}
			if g.handingOver != nil {
				t.Fatalf("a failed hand-over left %q pending", g.handingOver)
			}
			g.handingOver = [][]string{p}
			g.observe(s, true)
			if _, ok := framework.Path(p...).Lookup(g.manifest); ok {
				t.Fatalf("the passed hand-over left %q in the manifest", p)
			}
			if g.templates != templates {
				t.Fatalf("templates = %d after a hand-over, want %d", g.templates, templates)
			}
		})
	}
}

// TestJQPath spells keys with dots and slashes as jq reads them.
func TestJQPath(t *testing.T) {
	if got, want := jqPath([]string{"metadata", "labels", "app.kubernetes.io/name"}), `.["metadata"]["labels"]["app.kubernetes.io/name"]`; got != want {
		t.Fatalf("jqPath = %s, want %s", got, want)
	}
}
