// Package judge decides, for the kubectl plugin's verbs, as
// apply-hygiene's webhooks and audit decide: PolicyFlags load the server's
// policy engine with the installed chart's configuration and user
// policies (or the flags'), a Judge explains stored objects with the
// audit's rules (Judge.Explain) and has predicted applies reviewed by the
// review core, mutating pass then validating pass (Webhooks.Apply), and
// Finding is one decision on one field as every verb prints it. See
// ExampleJudge_Explain.
package judge
