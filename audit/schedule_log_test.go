package audit

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestScheduleErrorsLogged: a Schedule's Lease that the API server
// forbids (helm uninstall deleted the Role) is one info line without the
// error, which names no failure; any other error is logged as one.
func TestScheduleErrorsLogged(t *testing.T) {
	leases := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	forbidden := fmt.Errorf("reading the audit schedule lease ns/l: %w", apierrors.NewForbidden(leases, "l", errors.New("no role")))
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"forbidden", forbidden, `"level"=0 "msg"="` + scheduleForbidden + `"`},
		{"any other error", errors.New("connection refused"), `"msg"="recording the audit scan in its schedule failed" "error"="connection refused"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
			logScheduleError(logr.NewContext(context.Background(), log), tc.err, "recording the audit scan in its schedule failed")
			if len(lines) != 1 || lines[0] != tc.want {
				t.Errorf("logged %q, want [%q]", lines, tc.want)
			}
		})
	}
}
