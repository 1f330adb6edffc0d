package reports

import (
	"encoding/json"

	v1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
)

// DefaultMaxResults is the default of Limits.MaxResults.
const DefaultMaxResults = 500

// DefaultMaxBytes is the default of Limits.MaxBytes: 1 MiB, two thirds of
// etcd's default request limit (1.5 MiB), which bounds a whole object.
const DefaultMaxBytes = 1 << 20

// Limits bound the results of one report, so that writing it never fails
// on the size of the object. The first results, in the audit's order, are
// kept; the rest are dropped and counted.
type Limits struct {
	// MaxResults is the most results one report keeps. Default:
	// DefaultMaxResults.
	MaxResults int
	// MaxBytes is the most bytes the JSON of one report's results may
	// take. Default: DefaultMaxBytes.
	MaxBytes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxResults <= 0 {
		l.MaxResults = DefaultMaxResults
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// apply keeps the longest prefix of results within the limits and returns
// it with the count of the others.
func (l Limits) apply(results []v1alpha1.ReportResult) ([]v1alpha1.ReportResult, int) {
	size := len("[]")
	for i, r := range results {
		if i >= l.MaxResults {
			return results[:i], len(results) - i
		}
		raw, err := json.Marshal(r)
		if err != nil {
			// A result is strings and numbers only; it always encodes.
			return results[:i], len(results) - i
		}
		size += len(raw) + len(",")
		if size > l.MaxBytes {
			return results[:i], len(results) - i
		}
	}
	return results, 0
}
