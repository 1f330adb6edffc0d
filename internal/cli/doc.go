// Package cli is what every verb of the kubectl plugin (kubectl hygiene)
// shares: the verb's shape in kubectl's style (Options → Complete →
// Validate → Run, see Verb and RunE) and the exit statuses (ExitOK,
// ExitFailure, ExitBadInput) that an error carries to main, the KIND/NAME
// and namespace arguments, reading manifests (ReadObjects), resolving
// kinds (Resource), and -o json|yaml output. Each verb is a
// package below this one; cmd/kubectl-hygiene holds main and the root
// command. See ExampleRunE.
package cli
