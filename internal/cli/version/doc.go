// Package version is `kubectl hygiene version`: it prints the plugin's
// release, which cmd/kubectl-hygiene passes in (set at build time). See
// ExampleNewCmd.
package version
