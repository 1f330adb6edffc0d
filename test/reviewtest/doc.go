// Package reviewtest sends AdmissionReviews to an admission handler in
// process, as the API server does, for the tests that must see an answer
// in time whatever they send: test/badinput and webhook's FuzzReview.
package reviewtest
