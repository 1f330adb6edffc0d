package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Attribute keys of a review's root span.
const (
	KeyOperation      = attribute.Key("k8s.admission.operation")
	KeyGroup          = attribute.Key("k8s.object.group")
	KeyVersion        = attribute.Key("k8s.object.version")
	KeyKind           = attribute.Key("k8s.object.kind")
	KeyResource       = attribute.Key("k8s.object.resource")
	KeySubresource    = attribute.Key("k8s.object.subresource")
	KeyNamespace      = attribute.Key("k8s.namespace.name")
	KeyName           = attribute.Key("k8s.object.name")
	KeyUID            = attribute.Key("k8s.admission.uid")
	KeyDryRun         = attribute.Key("k8s.admission.dry_run")
	KeyClassification = attribute.Key("apply_hygiene.classification")
	KeyRules          = attribute.Key("apply_hygiene.rules")
	KeyActions        = attribute.Key("apply_hygiene.actions")
)

// Request sets the identity of req's write on ctx's span (the review's root
// span): operation, the object's group, version, kind, resource,
// subresource, namespace and name, the request's UID and dry-run flag.
// Nothing from the objects' bodies.
func Request(ctx context.Context, req *admissionv1.AdmissionRequest) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(
		KeyOperation.String(string(req.Operation)),
		KeyGroup.String(req.Kind.Group),
		KeyVersion.String(req.Kind.Version),
		KeyKind.String(req.Kind.Kind),
		KeyResource.String(req.Resource.Resource),
		KeySubresource.String(req.SubResource),
		KeyNamespace.String(req.Namespace),
		KeyName.String(req.Name),
		KeyUID.String(string(req.UID)),
		KeyDryRun.Bool(req.DryRun != nil && *req.DryRun),
	)
}

// Decisions sets the write's classification and the decisions' rules and
// actions (one each, in the decisions' order) on ctx's span.
func Decisions(ctx context.Context, class policy.Classification, ds []policy.Decision) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	rules := make([]string, 0, len(ds))
	actions := make([]string, 0, len(ds))
	for _, d := range ds {
		rules = append(rules, string(d.Rule))
		actions = append(actions, string(d.Action))
	}
	span.SetAttributes(KeyClassification.String(string(class)), KeyRules.StringSlice(rules), KeyActions.StringSlice(actions))
}
