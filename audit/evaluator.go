package audit

import "github.com/apply-hygiene/apply-hygiene/policy"

// Evaluator decides about a policy input; *policy.Engine is one, the same
// engine admission asks.
type Evaluator = policy.Evaluator
