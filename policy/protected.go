package policy

import (
	"fmt"
	"strings"
)

// protectedPointers are the fields no remedy writes, nor anything under
// them: what the API server keeps for itself (managedFields, the
// resourceVersion, the uid, the generation, the timestamps), what names
// the object (its name, namespace, apiVersion and kind) and its status,
// which a write to the main resource never changes.
var protectedPointers = []string{
	"/metadata/managedFields", "/metadata/resourceVersion", "/metadata/uid",
	"/metadata/name", "/metadata/namespace", "/metadata/generation",
	"/metadata/creationTimestamp", "/metadata/deletionTimestamp",
	"/apiVersion", "/kind", "/status",
	// The key "" at the top: "/" and everything under it.
	"/",
}

// writable checks that a remedy may write the field at pointer p (add,
// remove or replace it): neither p nor a field that encloses it is
// protected (protectedPointers), and p is not /metadata itself, whose
// keys a remedy writes one by one (a label, an annotation). A test
// changes nothing and may read any field.
func writable(p string) error {
	if p == "/metadata" {
		return fmt.Errorf("a remedy writes the fields of /metadata, never /metadata as a whole")
	}
	for _, q := range protectedPointers {
		if p == q || strings.HasPrefix(p, q+"/") {
			return fmt.Errorf("a remedy never writes %s, which the API server keeps or which names the object", q)
		}
	}
	return nil
}
