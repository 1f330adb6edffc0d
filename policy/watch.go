package policy

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
)

// Watch reloads the policy set whenever a policy file in the directories
// of the current Sources changes, once no change came for the debounce
// time (WithDebounce). It blocks until ctx is done and then returns nil;
// it returns an error when the directories cannot be watched. A failed
// reload is logged to the logr.Logger in ctx and kept in Status, and the
// previous set stays in force.
func (e *Engine) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("starting policy watcher: %w", err)
	}
	defer w.Close()
	e.mu.Lock()
	dirs := slices.Clone(e.sources.Dirs)
	e.mu.Unlock()
	for _, dir := range dirs {
		if err := w.Add(dir); err != nil {
			return fmt.Errorf("watching policy directory %s: %w", dir, err)
		}
	}
	e.watchLoop(ctx, w)
	return nil
}

func (e *Engine) watchLoop(ctx context.Context, w *fsnotify.Watcher) {
	log := logr.FromContextOrDiscard(ctx)
	changed := newChangeSignal()
	go forwardEvents(w, changed, log)
	debounce(ctx, e.opts.debounce, changed, func() { e.reloadFromWatch(ctx, log) })
}

// forwardEvents notifies changed of each event of w that concerns the
// policies and of each error (after which a reload checks the files),
// and closes changed when w's channels close (Watch's w.Close).
func forwardEvents(w *fsnotify.Watcher, changed changeSignal, log logr.Logger) {
	defer close(changed)
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if concernsPolicies(ev) {
				changed.notify()
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			log.Error(err, "watching policy directories failed")
			changed.notify()
		}
	}
}

func (e *Engine) reloadFromWatch(ctx context.Context, log logr.Logger) {
	e.mu.Lock()
	err := e.reloadLocked(ctx)
	e.mu.Unlock()
	if err != nil {
		log.Error(err, "reloading policies failed")
		return
	}
	log.V(1).Info("reloaded policies", "version", e.Status().Version)
}

// concernsPolicies reports whether a file event may change the policies: a
// module file, or the "..data" link that a ConfigMap volume swaps.
func concernsPolicies(ev fsnotify.Event) bool {
	name := filepath.Base(ev.Name)
	return isModuleFile(name) || strings.HasPrefix(name, "..")
}
