// Package events holds what the two drivers that record Kubernetes Events
// share: the periodic audit (audit) and the admission webhook (webhook).
// An event's reason is its rule ID in CamelCase (Reason), its note is the
// decision's message cut to what the events API accepts (Truncate,
// MaxNote), and a Limiter lets at most one event per object and rule
// through per interval. See ExampleLimiter.
package events
