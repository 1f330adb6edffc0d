package webhook

import "io"

// readAllSized reads r to its end as io.ReadAll does, into one buffer of
// size bytes (and one more, to see the end without growing) when size,
// the request's Content-Length, is known and under maxRequestSize:
// io.ReadAll starts at 512 bytes and grows, allocating two to three times
// the body on the way.
func readAllSized(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 || size >= maxRequestSize {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF { // as io.ReadAll: only the reader's own EOF ends it
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // longer than announced: grow as ReadAll would
		}
	}
}
