package jsontree

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPathsSetDelete(t *testing.T) {
	const doc = `{"b":{"y":[1,{"z":true}]},"a":"s"}`
	decode := func() map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	var names []string
	for _, p := range Paths(decode()) {
		names = append(names, String(p))
	}
	if diff := cmp.Diff([]string{"a", "b", "b.y", "b.y.0", "b.y.1", "b.y.1.z"}, names); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	tests := map[string]struct {
		edit func(m map[string]any)
		want string
	}{
		"set a list element":   {edit: func(m map[string]any) { Set(m, []any{"b", "y", 0}, nil) }, want: `{"a":"s","b":{"y":[null,{"z":true}]}}`},
		"set a nested key":     {edit: func(m map[string]any) { Set(m, []any{"b", "y", 1, "z"}, "v") }, want: `{"a":"s","b":{"y":[1,{"z":"v"}]}}`},
		"delete a key":         {edit: func(m map[string]any) { Delete(m, []any{"b", "y"}) }, want: `{"a":"s","b":{}}`},
		"delete nulls an item": {edit: func(m map[string]any) { Delete(m, []any{"b", "y", 1}) }, want: `{"a":"s","b":{"y":[1,null]}}`},
		"a path that leads nowhere": {edit: func(m map[string]any) { Set(m, []any{"a", "x", "y"}, 1); Delete(m, []any{"b", "y", 7}) },
			want: `{"a":"s","b":{"y":[1,{"z":true}]}}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := decode()
			tc.edit(m)
			got, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
