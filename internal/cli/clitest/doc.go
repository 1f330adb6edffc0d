// Package clitest is what the tests of the kubectl plugin's verbs share:
// Run runs a verb's command as main runs it (cli.Execute: "error: …" on
// stderr, the exit status), FakeCluster connects it to a fake API server
// holding the objects of YAML files, and Golden compares output with a
// golden file. Only tests import it. See ExampleRun.
package clitest
