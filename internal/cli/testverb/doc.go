// Package testverb is `kubectl hygiene test` (a package named test would
// read as a test helper): it runs the cases of *_test.yaml files, each a
// recorded AdmissionReview with the decisions expected, through the
// review core as the API server calls the webhooks (mutating pass, then
// validating pass), offline, with the bundled rules and the configuration
// and user policies each file names, and prints a (-want +got) diff per
// failing case, or a JUnit report (-o junit). Options follows kubectl's
// Complete → Validate → Run. See ExampleNewCmd.
package testverb
