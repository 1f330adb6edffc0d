package merge

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestLastAppliedCacheConcurrent shares cached parses of last-applied
// between concurrent analyses of the captured reviews (run it with -race)
// and holds every answer equal to an Analyzer without the cache: no
// analysis changes a shared entry.
func TestLastAppliedCacheConcurrent(t *testing.T) {
	pairs := capturedPairs(t, "../webhook/testdata/reviews")
	analyze := func(a *Analyzer, p pair) []any {
		u, uErr := a.AnalyzeUpdate(p.old, p.new)
		e, eErr := a.AnalyzeUpdate(p.old, withLastAppliedOfObject(p.new, p.old))
		c, cErr := a.AnalyzeClientSideApply(p.old, p.new)
		x, xErr := a.Explain(p.new)
		return []any{u, e, c, x, fmt.Sprint(uErr, eErr, cErr, xErr)}
	}
	uncached := NewAnalyzer(WithLastAppliedCacheSize(0))
	want := make([][]any, len(pairs))
	for i, p := range pairs {
		want[i] = analyze(uncached, p)
	}
	cached := NewAnalyzer(WithLastAppliedCacheSize(8))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for r := range 2 {
				for i := range pairs {
					i := (i + g + r) % len(pairs)
					if diff := cmp.Diff(want[i], analyze(cached, pairs[i]), pathsAsStrings); diff != "" {
						t.Errorf("%s: cached analysis differs (-uncached +cached):\n%s", pairs[i].name, diff)
					}
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkAnalyzeUpdateEdit analyzes the typical edit of the webhook's
// benchmark (an imperative change, judged under old's last-applied):
// lastApplied=same repeats one review, so its last-applied comes from the
// cache after the first; lastApplied=distinct cycles through 1,024
// copies whose last-applied differ by a label, more than the cache holds,
// so every parse is a miss.
func BenchmarkAnalyzeUpdateEdit(b *testing.B) {
	data, err := os.ReadFile("../webhook/testdata/bench/typical-edit.json")
	if err != nil {
		b.Fatal(err)
	}
	var review struct {
		Request struct{ Object, OldObject json.RawMessage }
	}
	if err := json.Unmarshal(data, &review); err != nil {
		b.Fatal(err)
	}
	old, new := &unstructured.Unstructured{}, &unstructured.Unstructured{}
	if err := old.UnmarshalJSON(review.Request.OldObject); err != nil {
		b.Fatal(err)
	}
	if err := new.UnmarshalJSON(review.Request.Object); err != nil {
		b.Fatal(err)
	}
	new = withLastAppliedOfObject(new, old)
	distinct := make([][2]*unstructured.Unstructured, 1024)
	for i := range distinct {
		la, err := ParseLastApplied(old)
		if err != nil {
			b.Fatal(err)
		}
		labels := la.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["bench"] = fmt.Sprint(i)
		la.SetLabels(labels)
		o, n := old.DeepCopy(), new.DeepCopy()
		setLastApplied(b, o, la)
		setLastApplied(b, n, la)
		distinct[i] = [2]*unstructured.Unstructured{o, n}
	}
	a := NewAnalyzer()
	b.Run("lastApplied=same", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.AnalyzeUpdate(old, new); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lastApplied=distinct", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			p := distinct[i%len(distinct)]
			i++
			if _, err := a.AnalyzeUpdate(p[0], p[1]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestWrittenLastAppliedIsStoredForm holds the source of a cached
// last-applied to the object compared: a ConfigMap whose binaryData is
// wrapped base64 is stored otherwise than the cached parse (storedForm),
// so its typed value is not the cache's.
func TestWrittenLastAppliedIsStoredForm(t *testing.T) {
	tests := map[string]struct {
		source func(a *Analyzer, obj map[string]any, p *parsedLastApplied) source
		want   func(obj map[string]any) map[string]any
	}{
		"last-applied as the previous manifest": {
			source: func(a *Analyzer, obj map[string]any, p *parsedLastApplied) source {
				return a.writtenLastApplied("ConfigMap", obj, p)
			},
			want: func(obj map[string]any) map[string]any { return obj },
		},
		"last-applied as the manifest": {
			source: func(a *Analyzer, obj map[string]any, p *parsedLastApplied) source {
				return a.writtenManifest("ConfigMap", obj, p)
			},
			want: withoutLastApplied,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := NewAnalyzer()
			la, p, err := a.parseLastApplied(loadFixture(t, "configmap-wrapped-base64").live)
			if err != nil {
				t.Fatal(err)
			}
			obj := storedForm("ConfigMap", la.Object)
			if diff := cmp.Diff(tc.want(obj), tc.source(a, obj, p).obj); diff != "" {
				t.Errorf("source object (-want +got):\n%s", diff)
			}
		})
	}
}
