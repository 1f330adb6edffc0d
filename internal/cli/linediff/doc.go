// Package linediff writes the unified diff (diff -u) of two texts, line by
// line, as `kubectl hygiene audit --fix` shows a fix before it writes it.
// See ExampleUnified.
package linediff
