// Package policy decides what apply-hygiene does about a write: Go computes
// the facts (package merge), Rego decides.
//
// An Engine compiles the bundled rules (policy/rules/*.rego, one file per
// rule ID of docs/rules.md) together with user policies from directories
// or memory, prepares the query data.applyhygiene.decisions once per
// policy set, and evaluates it for each request:
//
//	engine, err := policy.New(ctx, policy.WithConfig(cfg), policy.WithDirs("/etc/apply-hygiene/policies"))
//	...
//	decisions, err := engine.Evaluate(ctx, &policy.Input{...})
//
// The input is an Input (see docs/policy-input.md); each Decision has a
// rule ID, an Action (deny, warn, dryrun, repair or prune), a one-line
// message and the field paths concerned, and its remedy as data: the
// command to show (Command) and, for a repair or a prune, the JSON patch
// that the rule built from merge's facts (Patch). ApplyRemedy is the one
// place that carries such patches out on an object (see
// ExampleApplyRemedy). Per-rule actions, break-glass
// groups, exemptions and the namespace label that overrides actions come
// from a Config, the data document data.applyhygiene.config.
//
// The audit's decisions (classification Audit) also say whether a bundled
// rule's package made them (Decision.Bundled), as only those patches are
// the audit's to write; so that the engine can tell, a user module may
// define nothing in applyhygiene.lib or in a bundled rule's package, and
// one that does fails to load.
//
// Policies run with restricted capabilities: no http.send, no net.*
// builtins, no opa.runtime and nothing else that reaches the network or the
// environment; a module that calls one fails to load, naming its file and
// line. Reload swaps in a new policy set atomically and keeps the last good
// set when the new one fails; Watch reloads when the policy directories
// change. See Example for a complete use.
//
// Many writes have an empty analysis: nothing for any rule to report. At
// each load the engine evaluates the decisions partially, with the
// request, the namespace and the descriptive parts of the analysis
// unknown, to find the classifications for which such an input can
// yield no decision whatever those parts are (Status.Silent); Evaluate
// then answers them without running Rego (Engine.Skipped counts them).
// A user policy that may decide on them only turns the shortcut off for
// the classifications it concerns.
package policy
