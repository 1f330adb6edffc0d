package admissionevents_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// auditEvent is what the test reads of an audit.k8s.io/v1 Event.
type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	ObjectRef  struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Annotations map[string]string `json:"annotations"`
}

// hygieneAnnotations are the annotations apply-hygiene's two webhooks
// added: the API server prefixes each key with the webhook's name.
func (e auditEvent) hygieneAnnotations() map[string]string {
	out := map[string]string{}
	for k, v := range e.Annotations {
		if strings.HasPrefix(k, "validate.apply-hygiene.io/") || strings.HasPrefix(k, "mutate.apply-hygiene.io/") {
			out[k] = v
		}
	}
	return out
}

// writes returns the completed PATCHes of deployments/name in namespace
// from the API server's audit log, oldest first.
func writes(t *testing.T, namespace, name string) []auditEvent {
	t.Helper()
	f, err := os.Open(framework.ControlPlane(t).AuditLogPath())
	if err != nil {
		t.Fatalf("opening the audit log: %v", err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("decoding an audit log line: %v\n%s", err, sc.Text())
		}
		if e.Stage == "ResponseComplete" && e.Verb == "patch" && e.ObjectRef.Resource == "deployments" &&
			e.ObjectRef.Namespace == namespace && e.ObjectRef.Name == name {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
	return out
}

// wantWrites waits until the audit log has len(want) PATCHes of
// deployments/name, then compares each one's status code, dry run and
// apply-hygiene annotations with want.
func wantWrites(t *testing.T, namespace, name string, want []loggedWrite) {
	t.Helper()
	var got []auditEvent
	framework.Eventually(t, 10*time.Second, fmt.Sprintf("%d PATCHes of deployment/%s in the audit log", len(want), name), func(_ context.Context) (bool, error) {
		got = writes(t, namespace, name)
		return len(got) >= len(want), nil
	})
	var gotWrites []loggedWrite
	for _, e := range got {
		gotWrites = append(gotWrites, loggedWrite{Code: e.ResponseStatus.Code, DryRun: strings.Contains(e.RequestURI, "dryRun=All"), Annotations: e.hygieneAnnotations()})
	}
	if diff := cmp.Diff(want, gotWrites); diff != "" {
		t.Errorf("PATCHes of deployment/%s in the audit log (-want +got):\n%s", name, diff)
	}
}

// loggedWrite is one write as the audit log records it.
type loggedWrite struct {
	Code        int
	DryRun      bool
	Annotations map[string]string
}
