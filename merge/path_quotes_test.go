package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitOutsideQuotes(t *testing.T) {
	tests := map[string]struct {
		s    string
		want []string
	}{
		"no separator":                      {s: `name="a"`, want: []string{`name="a"`}},
		"separators outside quotes":         {s: `name="a",port=80`, want: []string{`name="a"`, `port=80`}},
		"a separator inside quotes stays":   {s: `name="a,b",port=80`, want: []string{`name="a,b"`, `port=80`}},
		"an escaped quote keeps it quoted":  {s: `name="a\",b",port=80`, want: []string{`name="a\",b"`, `port=80`}},
		"an empty string is one empty part": {s: ``, want: []string{``}},
		"a trailing separator":              {s: `a,`, want: []string{`a`, ``}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, splitOutsideQuotes(tc.s, ',')); diff != "" {
				t.Errorf("splitOutsideQuotes(%q) (-want +got):\n%s", tc.s, diff)
			}
		})
	}
}

func TestClosingBracket(t *testing.T) {
	tests := map[string]struct {
		s       string
		want    int
		wantErr bool
	}{
		"a plain element":                   {s: `[name="a"].x`, want: 9},
		"a bracket inside quotes is passed": {s: `[name="a]"]`, want: 10},
		"an escaped quote stays quoted":     {s: `[name="a\"]"]`, want: 12},
		"unterminated":                      {s: `[name="a"`, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := closingBracket(tc.s)
			if (err != nil) != tc.wantErr {
				t.Fatalf("closingBracket(%q) error = %v, want error %v", tc.s, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("closingBracket(%q) (-want +got):\n%s", tc.s, diff)
			}
		})
	}
}
