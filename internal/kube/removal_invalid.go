package kube

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A dry run the server refuses as Invalid (422) is a removal that no
// write can carry: a prune riding on the write under review would make the
// API server refuse that write, a false denial of ours. So every 422 is
// RemovalRejected, whatever it names: a ValidatingAdmissionPolicy's (its
// default status), a grand-parent's (a PersistentVolumeClaim's "spec is
// immutable"), the write under review's own (which fails without us). Only
// a refusal about the removal is kept for the same question: another may
// not hold for the next write, whose orphan would be dropped for nothing.

// rejectsRemoval reports whether err, an Invalid answer to the dry run of
// the removal of tokens, names the removed field among its causes: the
// field itself or one of its fields, its parent (a list or a map that
// must not be empty), or, for a list element, an element of the same
// list at or after its index (the elements after it move up).
func rejectsRemoval(err error, tokens []string) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if touches(fieldPathTokens(cause.Field), tokens) {
			return true
		}
	}
	return false
}

// touches reports whether the field at field is one the removal of
// removed necessarily touches (see rejectsRemoval).
func touches(field, removed []string) bool {
	if len(field) == 0 || len(removed) == 0 {
		return false
	}
	if len(field) >= len(removed) && slices.Equal(field[:len(removed)], removed) {
		return true // the field or one of its fields
	}
	parent := removed[:len(removed)-1]
	if len(parent) > 0 && slices.Equal(field, parent) {
		return true // its parent
	}
	i, err := strconv.Atoi(removed[len(removed)-1])
	if err != nil || len(field) < len(removed) || !slices.Equal(field[:len(parent)], parent) {
		return false
	}
	j, err := strconv.Atoi(field[len(parent)])
	return err == nil && j >= i // a later element of the same list
}

// fieldPathTokens splits a field path as the API server prints it
// (spec.ports[0].nodePort, metadata.labels[app.kubernetes.io/name]) into
// the tokens of its JSON pointer.
func fieldPathTokens(path string) []string {
	var tokens []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			tokens = append(tokens, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '.':
			flush()
		case '[':
			flush()
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				cur.WriteString(path[i+1:])
				i = len(path)
				continue
			}
			tokens = append(tokens, path[i+1:i+end])
			i += end
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return tokens
}
