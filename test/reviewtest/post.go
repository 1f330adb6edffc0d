package reviewtest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"
)

// Post sends body to h as the API server sends a review (a JSON POST to
// path) and returns the recorded answer. It errors when h has not answered
// within timeout: the API server would have given up. h goes on in the
// background then, writing to a recorder nobody reads.
func Post(ctx context.Context, h http.Handler, path string, body []byte, timeout time.Duration) (*httptest.ResponseRecorder, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
		return rec, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer within %s", timeout)
	}
}
