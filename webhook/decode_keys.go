package webhook

import "bytes"

// exactTypeKeys reports whether every top-level key of body, a valid JSON
// object, that encoding/json matches case-insensitively to "apiVersion" or
// "kind" is spelled exactly so, and no top-level key is escaped.
// controller-runtime reads the review's kind with encoding/json
// (json.SimpleMetaFactory), which takes "Kind" or "APIVERSION" too, and the
// review itself with a case-sensitive decoder; decodeReview reads both
// with the latter, so it is only equal when no such key is there.
func exactTypeKeys(body []byte) bool {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(body, i)
		if i >= len(body) {
			return false
		}
		if body[i] == '}' {
			return true
		}
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
		key, next, ok := plainKey(body, i)
		if !ok || ambiguousTypeKey(key) {
			return false
		}
		i = skipSpace(body, next)
		if i >= len(body) || body[i] != ':' {
			return false
		}
		if i = skipValue(body, skipSpace(body, i+1)); i < 0 {
			return false
		}
	}
}

// ambiguousTypeKey reports whether key is "apiVersion" or "kind" in
// another spelling that encoding/json's field matching (bytes.EqualFold)
// accepts.
func ambiguousTypeKey(key []byte) bool {
	for _, name := range [...]string{"apiVersion", "kind"} {
		if string(key) != name && bytes.EqualFold(key, []byte(name)) {
			return true
		}
	}
	return false
}

// plainKey returns the key string starting at body[i] and the index after
// it; false for an escaped key.
func plainKey(body []byte, i int) ([]byte, int, bool) {
	if i >= len(body) || body[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(body); j++ {
		switch body[j] {
		case '\\':
			return nil, 0, false
		case '"':
			return body[i+1 : j], j + 1, true
		}
	}
	return nil, 0, false
}

// skipValue returns the index after the JSON value that starts at body[i]
// (valid JSON), -1 when body ends first.
func skipValue(body []byte, i int) int {
	depth := 0
	for ; i < len(body); i++ {
		switch c := body[i]; c {
		case '"':
			if i = skipString(body, i); i < 0 {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return i // the end of the enclosing object: an empty value
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	if depth == 0 {
		return i
	}
	return -1
}

// skipString returns the index of the quote that closes the string whose
// opening quote is body[i], -1 when body ends first.
func skipString(body []byte, i int) int {
	for i++; i < len(body); i++ {
		switch body[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func skipSpace(body []byte, i int) int {
	for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r') {
		i++
	}
	return i
}
