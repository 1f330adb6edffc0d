package policy

// Autoscaling describes the HorizontalPodAutoscalers that scale the object
// written: the input's autoscaling part, set only when at least one
// targets it.
type Autoscaling struct {
	// Autoscalers are the HorizontalPodAutoscalers (autoscaling/v2) of the
	// object's namespace whose spec.scaleTargetRef names the object (its
	// API group, kind and name).
	Autoscalers []Autoscaler `json:"autoscalers"`
	// ManifestReplicas is spec.replicas as the manifest of an apply sets
	// it (merge.ManifestReplicas): a client-side apply's new last-applied,
	// a server-side apply's applied configuration. Left out when the
	// manifest does not set it, and for writes that are no apply.
	ManifestReplicas any `json:"manifestReplicas,omitempty"`
}

// Autoscaler is one HorizontalPodAutoscaler, as the policies see it.
type Autoscaler struct {
	// Name is the HorizontalPodAutoscaler's name (in the object's
	// namespace).
	Name string `json:"name"`
	// MinReplicas is spec.minReplicas; 1, the API's default, when unset.
	MinReplicas int64 `json:"minReplicas"`
	// MaxReplicas is spec.maxReplicas.
	MaxReplicas int64 `json:"maxReplicas"`
	// CurrentReplicas is status.currentReplicas: the count the autoscaler
	// last saw; 0 before its first pass.
	CurrentReplicas int64 `json:"currentReplicas"`
	// DesiredReplicas is status.desiredReplicas: the count the autoscaler
	// last asked for; 0 before it computed one.
	DesiredReplicas int64 `json:"desiredReplicas"`
}
