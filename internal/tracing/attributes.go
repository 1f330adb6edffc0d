package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	admissionv1 "k8s.io/api/admission/v1"
)

// Attribute keys of a review's root span: the identity of the write, which
// Request sets.
const (
	KeyOperation   = attribute.Key("k8s.admission.operation")
	KeyGroup       = attribute.Key("k8s.object.group")
	KeyVersion     = attribute.Key("k8s.object.version")
	KeyKind        = attribute.Key("k8s.object.kind")
	KeyResource    = attribute.Key("k8s.object.resource")
	KeySubresource = attribute.Key("k8s.object.subresource")
	KeyNamespace   = attribute.Key("k8s.namespace.name")
	KeyName        = attribute.Key("k8s.object.name")
	KeyUID         = attribute.Key("k8s.admission.uid")
	KeyDryRun      = attribute.Key("k8s.admission.dry_run")
)

// Attribute keys of a review's root span: what apply-hygiene decided about
// the write, which Decisions sets.
const (
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
// actions (one each, in the decisions' order, named by ruleAction) on
// ctx's span. Generic so that this package imports no policy package and
// sits below every layer that traces.
func Decisions[D any](ctx context.Context, class string, ds []D, ruleAction func(D) (rule, action string)) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	rules := make([]string, 0, len(ds))
	actions := make([]string, 0, len(ds))
	for _, d := range ds {
		rule, action := ruleAction(d)
		rules = append(rules, rule)
		actions = append(actions, action)
	}
	span.SetAttributes(KeyClassification.String(class), KeyRules.StringSlice(rules), KeyActions.StringSlice(actions))
}
