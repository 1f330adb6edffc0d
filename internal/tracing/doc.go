// Package tracing holds apply-hygiene's OpenTelemetry spans: the names and
// attributes of a review's spans, and a Span that is nothing, and costs
// nothing, when tracing is off (a nil trace.Tracer).
//
// The attributes name a write and what was decided about it: the object's
// group, kind, namespace and name, the operation, the dry-run flag, the
// classification, the rules and their actions. They never hold a field's
// value, nor an error's text (an error may quote one). See ExampleStart.
package tracing
