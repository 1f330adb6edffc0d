package explain

import "testing"

// explain's table shows values as compact JSON, cut at maxMessageValue,
// without HTML escaping: a Secret's hidden value reads "<redacted>".
func TestValue(t *testing.T) {
	long := make([]byte, 100)
	for i := range long {
		long[i] = 'a'
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"absent", nil, "nothing"},
		{"a redacted Secret value", "<redacted>", `"<redacted>"`},
		{"an ampersand", "a&b", `"a&b"`},
		{"a number", int64(8080), "8080"},
		{"a map", map[string]any{"port": int64(80)}, `{"port":80}`},
		{"a long string", string(long), `"` + string(long[:maxMessageValue-1]) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := value(tc.in); got != tc.want {
				t.Errorf("value(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
