package webhook

import (
	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

// Cluster reads what a review needs beyond the request itself: the parent
// of a /scale request, an object's revisions and namespace labels. It is
// the review core's interface; a *kube.Cluster on the API server is the
// one the server uses.
type Cluster = review.Cluster
