package reviewtest

import (
	"net/http"
	"testing"
	"time"
)

func TestPost(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		_, _ = w.Write([]byte(r.Method + " " + r.URL.Path))
	})
	rec, err := Post(t.Context(), echo, "/validate", []byte("{}"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Body.String(); got != "POST /validate" || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("answer %q with Content-Type %q, want \"POST /validate\" with application/json", got, rec.Header().Get("Content-Type"))
	}

	release := make(chan struct{})
	defer close(release)
	hang := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release })
	if _, err := Post(t.Context(), hang, "/", nil, 50*time.Millisecond); err == nil || err.Error() != "no answer within 50ms" {
		t.Errorf("error %v, want \"no answer within 50ms\"", err)
	}
}
