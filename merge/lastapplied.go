package merge

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// LastAppliedAnnotation is the annotation in which client-side apply keeps
// the manifest of the previous apply.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// AnnotationsLimit is the API server's limit on the total size of an
// object's annotations, in bytes.
const AnnotationsLimit = 262144

// TooLargeThreshold is the size of annotations, in bytes, above which
// last-applied is reported as too large: 80% of AnnotationsLimit.
const TooLargeThreshold = AnnotationsLimit * 8 / 10

var (
	// ErrMissingLastApplied means the object has no last-applied annotation.
	ErrMissingLastApplied = errors.New("no " + LastAppliedAnnotation + " annotation")
	// ErrInvalidLastApplied means the annotation is not a JSON object or
	// names another object.
	ErrInvalidLastApplied = errors.New("invalid " + LastAppliedAnnotation + " annotation")
)

// LastAppliedStatus says what an object's last-applied annotation holds.
type LastAppliedStatus string

const (
	// LastAppliedPresent means the annotation holds a valid manifest.
	LastAppliedPresent LastAppliedStatus = "present"
	// LastAppliedMissing means the object has no annotation.
	LastAppliedMissing LastAppliedStatus = "missing"
	// LastAppliedInvalid means the annotation is not usable.
	LastAppliedInvalid LastAppliedStatus = "invalid"
)

// LastAppliedFault says why an invalid last-applied is unusable, and so
// what kubectl apply does with it.
type LastAppliedFault string

const (
	// FaultNotAnObject means the annotation is not a JSON object: not JSON,
	// or a JSON list, string, number or boolean. kubectl apply cannot
	// decode it into its previous manifest and fails on the object.
	FaultNotAnObject LastAppliedFault = "not-an-object"
	// FaultAnotherObject means the annotation names another kind (or group)
	// or another name than the object: kubectl apply does not check them
	// and computes its deletions from that other object's manifest.
	FaultAnotherObject LastAppliedFault = "another-object"
	// FaultMetadataNotAnObject means the annotation's metadata is not an
	// object: kubectl apply ignores it, so deletes no label or annotation
	// that the previous manifest set.
	FaultMetadataNotAnObject LastAppliedFault = "metadata-not-an-object"
)

// LastAppliedInfo describes an object's last-applied annotation.
type LastAppliedInfo struct {
	// Status is present, missing or invalid.
	Status LastAppliedStatus `json:"status"`
	// Error says why the annotation is invalid.
	Error string `json:"error,omitempty"`
	// Fault is the kind of fault of an invalid annotation.
	Fault LastAppliedFault `json:"fault,omitempty"`
	// Bytes is the size of the annotation value.
	Bytes int `json:"bytes"`
	// Replaced is set when the write leaves another annotation than this
	// one: it rewrote or removed it. What is said of this one then holds
	// of the stored object no more.
	Replaced bool `json:"replaced,omitempty"`
	// KubectlMade, for an object as stored without last-applied
	// (AnalyzeLive), is set when a person made it with kubectl and no
	// server-side applier has taken it over (KubectlMade): its manifest
	// is the person's to record. Admission's analyses never set it.
	KubectlMade bool `json:"kubectlMade,omitempty"`
}

// LastAppliedReplaced reports whether the write that turned old into new
// left another last-applied annotation than old's: another value, or
// none where old had one (or one where old had none). The analyses set
// LastAppliedInfo.Replaced with it.
func LastAppliedReplaced(old, new *unstructured.Unstructured) bool {
	before, had := old.GetAnnotations()[LastAppliedAnnotation]
	after, has := new.GetAnnotations()[LastAppliedAnnotation]
	return had != has || before != after
}

// ParseLastApplied decodes obj's last-applied annotation. It returns an
// error wrapping ErrMissingLastApplied when there is none, or when it is
// empty or JSON null (kubectl then computes its patch with no previous
// manifest), and one wrapping ErrInvalidLastApplied when it is not a JSON
// object or when its kind or name differ from obj's, or its API group is
// neither obj's nor one that obj's kind moved from (extensions/v1beta1 for
// an apps/v1 Deployment): kubectl uses such an annotation as it is, and the
// API server serves an object in any version of its group. An annotation
// without apiVersion, kind or name is obj's: kubectl computes its patch
// with it all the same.
func ParseLastApplied(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	raw, ok := obj.GetAnnotations()[LastAppliedAnnotation]
	if !ok || raw == "" {
		return nil, ErrMissingLastApplied
	}
	p := decodeLastApplied(raw)
	if p.err != nil {
		return nil, p.err
	}
	if err := sameObject(obj, p.obj); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidLastApplied, err)
	}
	return p.obj, nil
}

// sameObject returns an error when la, obj's last-applied, names another
// object. kubectl never reads the annotation's apiVersion, kind or name
// (it hands the annotation to CreateThreeWayMergePatch as it is, and its
// JSON merge patch's preconditions judge the patch, in which a field of
// the previous manifest is never more than a deletion): only those that
// la has can name another object, and a group is judged with a kind.
func sameObject(obj, la *unstructured.Unstructured) error {
	if _, ok := la.Object["metadata"].(map[string]any); !ok && la.Object["metadata"] != nil {
		return &faultError{FaultMetadataNotAnObject, errors.New("metadata is not an object")}
	}
	want, got := obj.GroupVersionKind(), la.GroupVersionKind()
	if got.Kind != "" && (got.Kind != want.Kind || la.GetAPIVersion() != "" && !sameOrMovedGroup(got.Kind, got.Group, want.Group)) {
		return &faultError{FaultAnotherObject, fmt.Errorf("it is for %s, not %s", describeGVK(got), describeGVK(want))}
	}
	if name := la.GetName(); name != "" && name != obj.GetName() {
		return &faultError{FaultAnotherObject, fmt.Errorf("it names %q, not %q", name, obj.GetName())}
	}
	return nil
}

// faultError is an error of an invalid last-applied with its fault.
type faultError struct {
	fault LastAppliedFault
	err   error
}

func (e *faultError) Error() string { return e.err.Error() }

func (e *faultError) Unwrap() error { return e.err }

// faultOf returns the fault that err, of an invalid last-applied, names.
func faultOf(err error) LastAppliedFault {
	var fe *faultError
	if errors.As(err, &fe) {
		return fe.fault
	}
	return ""
}

// movedKinds are the kinds that moved out of the extensions group, by the
// group they moved to. Objects created before the move keep a last-applied
// that names extensions/v1beta1.
var movedKinds = map[string]string{
	"Deployment": "apps", "DaemonSet": "apps", "ReplicaSet": "apps",
	"Ingress": "networking.k8s.io", "NetworkPolicy": "networking.k8s.io",
	"PodSecurityPolicy": "policy",
}

// sameOrMovedGroup reports whether groups a and b hold the same kind: they
// are equal, or one is extensions and the other the group kind moved to.
func sameOrMovedGroup(kind, a, b string) bool {
	if a == b {
		return true
	}
	to, ok := movedKinds[kind]
	return ok && ((a == "extensions" && b == to) || (b == "extensions" && a == to))
}

func describeGVK(gvk schema.GroupVersionKind) string {
	if gvk.GroupVersion().Empty() {
		return gvk.Kind
	}
	return gvk.Kind + " in " + gvk.GroupVersion().String()
}

// lastAppliedInfo describes obj's last-applied and returns it parsed,
// through the cache: la and p are shared and must not be changed.
func (a *Analyzer) lastAppliedInfo(obj *unstructured.Unstructured) (info LastAppliedInfo, la *unstructured.Unstructured, p *parsedLastApplied) {
	info = LastAppliedInfo{Bytes: len(obj.GetAnnotations()[LastAppliedAnnotation])}
	la, p, err := a.parseLastApplied(obj)
	switch {
	case errors.Is(err, ErrMissingLastApplied):
		info.Status = LastAppliedMissing
	case err != nil:
		info.Status = LastAppliedInvalid
		info.Error = err.Error()
		info.Fault = faultOf(err)
	default:
		info.Status = LastAppliedPresent
	}
	return info, la, p
}

// AnnotationsSize returns the size of obj's annotations as the API server
// counts it against AnnotationsLimit: the sum of key and value lengths.
func AnnotationsSize(obj *unstructured.Unstructured) int {
	n := 0
	for k, v := range obj.GetAnnotations() {
		n += len(k) + len(v)
	}
	return n
}
