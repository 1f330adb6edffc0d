package events

import (
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Recorder records events on objects; the events.k8s.io recorder of
// client-go (k8s.io/client-go/tools/events) and controller-runtime's
// manager.GetEventRecorder are ones. The webhook and the audit take one.
type Recorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// MaxNote is the longest note the events API accepts, in bytes.
const MaxNote = 1024

// Reason turns a rule ID into an event reason in CamelCase:
// "imperative-edit" becomes "ImperativeEdit".
func Reason(rule string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(rule, "-") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]))
		b.WriteString(part[1:])
	}
	return b.String()
}

// Truncate cuts s to at most n bytes of valid UTF-8, ending with "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Regarding is the reference a recorder reads from an object: its kind,
// name and UID only, so that an event held for sending keeps nothing
// more of the object.
func Regarding(apiVersion, kind, namespace, name string, uid types.UID) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	obj.SetUID(uid)
	return obj
}
