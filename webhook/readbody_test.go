package webhook

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// readAllSized reads what io.ReadAll reads, with the same error, whatever
// the announced size; and a body of the announced size in one allocation.
func TestReadAllSizedReadsAsReadAll(t *testing.T) {
	body := bytes.Repeat([]byte(`{"a":"0123456789"}`), 1000)
	broken := errors.New("connection reset")
	tests := map[string]struct {
		reader func() io.Reader
		size   int64
	}{
		"the announced size":            {func() io.Reader { return bytes.NewReader(body) }, int64(len(body))},
		"no size announced":             {func() io.Reader { return bytes.NewReader(body) }, -1},
		"shorter than announced":        {func() io.Reader { return bytes.NewReader(body[:100]) }, int64(len(body))},
		"longer than announced":         {func() io.Reader { return bytes.NewReader(body) }, 100},
		"one byte at a time":            {func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) }, int64(len(body))},
		"an error after some bytes":     {func() io.Reader { return io.MultiReader(bytes.NewReader(body[:300]), iotest.ErrReader(broken)) }, int64(len(body))},
		"data and EOF in one read":      {func() io.Reader { return iotest.DataErrReader(bytes.NewReader(body)) }, int64(len(body))},
		"over the limit of the webhook": {func() io.Reader { return &io.LimitedReader{R: bytes.NewReader(body), N: 500} }, int64(len(body))},
		"a size at maxRequestSize":      {func() io.Reader { return bytes.NewReader(body) }, maxRequestSize},
		"empty":                         {func() io.Reader { return bytes.NewReader(nil) }, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want, wantErr := io.ReadAll(tc.reader())
			got, gotErr := readAllSized(tc.reader(), tc.size)
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("body (-io.ReadAll +readAllSized):\n%s", diff)
			}
			if !errors.Is(gotErr, wantErr) && !errors.Is(wantErr, gotErr) {
				t.Errorf("error: io.ReadAll %v, readAllSized %v", wantErr, gotErr)
			}
		})
	}
	r := bytes.NewReader(body)
	allocs := testing.AllocsPerRun(20, func() {
		r.Reset(body)
		if _, err := readAllSized(r, int64(len(body))); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 1 {
		t.Errorf("reading a %d-byte body of announced size: %.0f allocations, want 1", len(body), allocs)
	}
}
