package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// healthzChildEnv makes the test binary serve one /readyz request as
// TestHealthzLogLines' child (controller-runtime's healthz logger takes the
// first logger the process sets, so each case runs in a process of its own).
const healthzChildEnv = "APPLY_HYGIENE_HEALTHZ_CHILD"

// TestHealthzLogLines checks what the server logs, at debug, when
// controller-runtime's /readyz handler answers: one line per failed check
// naming it, and not the info line "healthz check failed" with statuses
// that name nothing.
func TestHealthzLogLines(t *testing.T) {
	if failing, ok := os.LookupEnv(healthzChildEnv); ok {
		serveReadyzOnce(failing == "shutdown")
		return
	}
	tests := map[string]struct {
		failing string
		want    []string // "V(level) logger: message checker"
	}{
		"a failing check is logged at debug, once, by name": {
			failing: "shutdown",
			want:    []string{"V(1) controller-runtime/healthz: healthz check failed shutdown"},
		},
		"passing checks log nothing": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHealthzLogLines$")
			cmd.Env = append(os.Environ(), healthzChildEnv+"="+tc.failing)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("the child test: %v\n%s%s", err, out, stderr.String())
			}
			var got []string
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				if !strings.HasPrefix(sc.Text(), "{") {
					continue
				}
				var line struct {
					Level                int
					Logger, Msg, Checker string
				}
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					t.Fatalf("decoding the log line %s: %v", sc.Text(), err)
				}
				got = append(got, fmt.Sprintf("V(%d) %s: %s %s", line.Level, line.Logger, line.Msg, line.Checker))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("log lines (-want +got):\n%s", diff)
			}
		})
	}
}

// serveReadyzOnce logs to stdout as the server does (newLogger, at debug)
// and serves one /readyz request (the handler's root, as the manager mounts it) with a passing check and the shutdown
// check, failing or not.
func serveReadyzOnce(shuttingDown bool) {
	ctrl.SetLogger(filtered(funcr.NewJSON(func(obj string) { fmt.Println(obj) }, funcr.Options{Verbosity: 1})))
	h := &healthz.Handler{Checks: map[string]healthz.Checker{
		"ping": healthz.Ping,
		"shutdown": func(*http.Request) error {
			if shuttingDown {
				return errors.New("shutting down")
			}
			return nil
		},
	}}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
}
