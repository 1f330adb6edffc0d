package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/util"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// peerPolicies is the hand-written Rego of the peer (peer/*.rego).
//
//go:embed peer/*.rego
var peerPolicies embed.FS

// peerQuery is the peer's one decision document.
const peerQuery = "data.peer.decision"

// peer is OPA with the hand-written Rego, prepared once, evaluated with
// each whole AdmissionReview as input, as OPA's server (kube-mgmt) or
// Gatekeeper's would.
type peer struct {
	query rego.PreparedEvalQuery
}

// peerDecision is data.peer.decision.
type peerDecision struct {
	deny, warn []string
}

func newPeer(ctx context.Context) (*peer, error) {
	paths, err := fs.Glob(peerPolicies, "peer/*.rego")
	if err != nil {
		return nil, err
	}
	opts := []func(*rego.Rego){rego.Query(peerQuery)}
	for _, p := range paths {
		src, err := peerPolicies.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		opts = append(opts, rego.Module(p, string(src)))
	}
	query, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("preparing the peer's policy: %w", err)
	}
	return &peer{query: query}, nil
}

func (p *peer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	// OPA's server decodes its input so: JSON numbers kept as written.
	var input map[string]any
	if err := util.UnmarshalJSON(body, &input); err != nil {
		http.Error(w, fmt.Sprintf("decoding the review: %v", err), http.StatusBadRequest)
		return
	}
	request, _ := input["request"].(map[string]any)
	uid, _ := request["uid"].(string)
	d, err := p.eval(r.Context(), input)
	if err != nil {
		writeAnswer(w, admissionv1.AdmissionResponse{UID: types.UID(uid), Allowed: false,
			Result: &metav1.Status{Code: http.StatusInternalServerError, Message: err.Error()}})
		return
	}
	resp := admissionv1.AdmissionResponse{UID: types.UID(uid), Allowed: len(d.deny) == 0, Warnings: d.warn}
	if !resp.Allowed {
		resp.Result = &metav1.Status{Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: strings.Join(d.deny, "; ")}
	}
	writeAnswer(w, resp)
}

func (p *peer) eval(ctx context.Context, input map[string]any) (peerDecision, error) {
	rs, err := p.query.Eval(ctx, rego.EvalInput(input))
	if err != nil {
		return peerDecision{}, fmt.Errorf("evaluating the peer's policy: %w", err)
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return peerDecision{}, errors.New("evaluating the peer's policy: no decision")
	}
	doc, ok := rs[0].Expressions[0].Value.(map[string]any)
	if !ok {
		return peerDecision{}, fmt.Errorf("evaluating the peer's policy: decision is %T, not an object", rs[0].Expressions[0].Value)
	}
	return peerDecision{deny: messages(doc["deny"]), warn: messages(doc["warn"])}, nil
}

// messages are the strings of a set (a JSON array in Go).
func messages(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, m := range list {
		if s, ok := m.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
