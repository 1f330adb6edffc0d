// Package junit writes the results of `kubectl hygiene test` as a JUnit XML
// report, the format CI systems read: one testsuite per test file, one
// testcase per case, a failure holding the decisions' diff. See ExampleWrite.
package junit
