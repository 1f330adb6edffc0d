// Package remedyoracle keeps, as the oracle of the tests that hold the
// remedies as data to it, the mutating pass's repair as it was before the
// remedies moved into the rules (issue 28): a switch on the rule ID that
// wrote each rule's fix by hand. internal/review and webhook test the
// decisions' patches against it, on their own fixtures and on every
// captured review.
package remedyoracle
