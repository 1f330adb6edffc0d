package framework

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// WarningLog collects the warnings of the API server's answers to a
// client (its rest.Config's WarningHandler) as kubectl prints them, one
// "Warning: …" line each.
type WarningLog struct {
	mu sync.Mutex
	b  strings.Builder
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *WarningLog) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintf(&w.b, "Warning: %s\n", text)
}

// String returns the lines collected so far.
func (w *WarningLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

var _ rest.WarningHandler = (*WarningLog)(nil)
