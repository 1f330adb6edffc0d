// Package auditverb is `kubectl hygiene audit` (named so as not to shadow
// the audit package it drives): it scans the objects stored in the
// cluster with the audit's scanner (audit.Scanner) and the policies of the
// installed chart, as apply-hygiene's server audit does, prints the
// findings as a table or as -o json|yaml, and with --fix plans, previews
// (a diff per object) or writes the guarded fixes of what needs no
// person. Options follows kubectl's Complete → Validate → Run; the root
// command gives it the cluster (cluster.ConnectFunc) and the analyzer.
// See ExampleNewCmd.
package auditverb
