package badinput_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The same handlers answer the corpus from several goroutines at once
// exactly as they answer it one request at a time: a Reviewer shares its
// analyzer, policy engine and cluster between requests. Run with -race.
func TestConcurrentAnswersEqualSequentialOnes(t *testing.T) {
	handlers := newHandlers(t)
	var names []string
	bodies := map[string][]byte{}
	want := map[string]outcome{}
	for name := range generators {
		if strings.HasPrefix(name, "env-10000-") || name == "last-applied-1mib" {
			continue // slow, and no different in kind
		}
		names = append(names, name)
		bodies[name] = corpus(t, name)
		for h, handler := range handlers {
			want[name+" "+h] = send(t, handler, bodies[name])
		}
	}
	const workers = 4
	var mu sync.Mutex
	got := map[string][]outcome{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for _, name := range names {
				for h, handler := range handlers {
					o, err := answer(t.Context(), handler, bodies[name])
					if err != nil {
						t.Errorf("%s %s: %v", name, h, err)
						continue
					}
					mu.Lock()
					got[name+" "+h] = append(got[name+" "+h], o)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for key, w := range want {
		for _, g := range got[key] {
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("%s: a concurrent answer differs from the sequential one (-want +got):\n%s", key, diff)
				break
			}
		}
	}
}
