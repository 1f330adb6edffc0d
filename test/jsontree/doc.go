// Package jsontree walks and edits decoded JSON documents (maps, lists and
// scalars as encoding/json decodes them) by node path, for the tests that
// take every node of an AdmissionReview in turn: the null-injection test
// of test/badinput and the mutations of webhook's FuzzReview.
//
// A path is a list of steps: a string for a map key, an int for a list
// index.
package jsontree
