package framework

import "testing"

// A write the API server could not call apply-hygiene for ends kubectl's
// stderr with the call's cause; a kill's cut-off is told from the others.
func TestWebhookCallCause(t *testing.T) {
	const call = `for: "STDIN": error when patching "STDIN": Internal error occurred: failed calling webhook "mutate.apply-hygiene.io": ` +
		`failed to call webhook: Post "https://apply-hygiene.apply-hygiene.svc:443/mutate?timeout=5s": `
	tests := map[string]struct {
		stderr    string
		wantCause string
		wantCall  bool
		wantCut   bool
	}{
		// CI, 2026-11-29: a SIGKILL while client-0's review was being written.
		"the client had closed the connection the kill broke": {
			stderr:    "Error from server (InternalError): error when applying patch:\n" + call + "use of closed network connection\n",
			wantCause: "use of closed network connection", wantCall: true, wantCut: true,
		},
		"the connection lost mid-request": {
			stderr:    call + "http2: client connection lost",
			wantCause: "http2: client connection lost", wantCall: true, wantCut: true,
		},
		"a reset read": {
			stderr:    call + "read tcp 10.0.0.1:4321->10.244.0.35:9443: read: connection reset by peer",
			wantCause: "read tcp 10.0.0.1:4321->10.244.0.35:9443: read: connection reset by peer", wantCall: true, wantCut: true,
		},
		"a dial refused is no cut-off in flight": {
			stderr:    call + "dial tcp 10.244.0.35:9443: connect: connection refused",
			wantCause: "dial tcp 10.244.0.35:9443: connect: connection refused", wantCall: true,
		},
		"a timeout is no cut-off": {
			stderr:    call + "context deadline exceeded",
			wantCause: "context deadline exceeded", wantCall: true,
		},
		"a denial is no failed call": {
			stderr: `error: admission webhook "validate.apply-hygiene.io" denied the request: [imperative-edit] …`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cause, ok := WebhookCallCause(tt.stderr)
			if cause != tt.wantCause || ok != tt.wantCall {
				t.Errorf("WebhookCallCause = %q, %v, want %q, %v", cause, ok, tt.wantCause, tt.wantCall)
			}
			if got := CutOffInFlight(cause); got != tt.wantCut {
				t.Errorf("CutOffInFlight(%q) = %v, want %v", cause, got, tt.wantCut)
			}
		})
	}
}
