# OPA's server answers POST / with data.system.main, the body being the
# input: the way OPA's own Kubernetes admission tutorial runs it. This
# turns the peer's decision (peer/imperative.rego) into the
# AdmissionReview the API server expects, as the in-process peer of
# hack/load/peer.go does: denied with code 403 and the denials joined by
# "; ", warnings as warnings.
package system

main := {
	"apiVersion": "admission.k8s.io/v1",
	"kind": "AdmissionReview",
	"response": object.union(allowed, warnings),
}

d := data.peer.decision

allowed := {"uid": input.request.uid, "allowed": true} if count(d.deny) == 0

allowed := {
	"uid": input.request.uid,
	"allowed": false,
	"status": {"code": 403, "reason": "Forbidden", "message": concat("; ", d.deny)},
} if count(d.deny) > 0

warnings := {"warnings": [w | some w in d.warn]} if count(d.warn) > 0

warnings := {} if count(d.warn) == 0
