package edge

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"pgregory.net/rapid"
)

// chunkReader hands out data in the chunk sizes given (cycling), then
// ends with err (io.EOF for a clean end); with eofLast it returns the
// last bytes together with err, as net/http's body does.
type chunkReader struct {
	data    []byte
	chunks  []int
	i       int
	err     error
	eofLast bool
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := min(len(p), len(r.data), r.chunks[r.i%len(r.chunks)])
	r.i++
	copy(p, r.data[:n])
	r.data = r.data[n:]
	if len(r.data) == 0 && r.eofLast {
		return n, r.err
	}
	return n, nil
}

// TestReadBodyIsReadAll holds readBody to the io.ReadAll of an
// io.LimitReader it replaces: the same bytes and the same error for any
// body, any way of handing it out, any limit, and any Content-Length
// (true, false or missing).
func TestReadBodyIsReadAll(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		data := rapid.SliceOfN(rapid.Byte(), 0, 3000).Draw(t, "data")
		chunks := rapid.SliceOfN(rapid.IntRange(0, 1200), 1, 8).Draw(t, "chunks")
		if chunks[0] == 0 {
			chunks[0] = 1 // a reader that only ever returns 0, nil never ends
		}
		end := rapid.SampledFrom([]error{io.EOF, io.ErrUnexpectedEOF, errors.New("reset")}).Draw(t, "end")
		eofLast := rapid.Bool().Draw(t, "eofLast")
		limit := rapid.IntRange(0, 3100).Draw(t, "limit")
		length := rapid.OneOf(rapid.Just(int64(-1)), rapid.Just(int64(len(data))), rapid.Int64Range(0, 1<<40)).Draw(t, "length")

		got, gotErr := readBody(&chunkReader{data: data, chunks: chunks, err: end, eofLast: eofLast}, length, limit)
		want, wantErr := io.ReadAll(io.LimitReader(&chunkReader{data: data, chunks: chunks, err: end, eofLast: eofLast}, int64(limit)+1))
		if !bytes.Equal(got, want) || gotErr != wantErr {
			t.Fatalf("readBody = %d bytes, %v; io.ReadAll = %d bytes, %v", len(got), gotErr, len(want), wantErr)
		}
	})
}

// TestReadBodyPresizeIsBounded: a declared Content-Length sizes the
// buffer only up to maxPresizeBytes, whatever the provider claims.
func TestReadBodyPresizeIsBounded(t *testing.T) {
	for _, length := range []int64{0, 1024, maxPresizeBytes, maxPresizeBytes + 1, MaxResponseBytes, 1 << 62} {
		body, err := readBody(bytes.NewReader(nil), length, MaxResponseBytes)
		if err != nil || len(body) != 0 {
			t.Fatalf("readBody(empty, %d) = %d bytes, %v", length, len(body), err)
		}
		if c := cap(body); c > maxPresizeBytes+1 {
			t.Errorf("readBody(empty, Content-Length %d) made a %d-byte buffer, want at most %d", length, c, maxPresizeBytes+1)
		}
	}
	// A 1 KiB answer that declares its length is read into one buffer.
	page := bytes.Repeat([]byte("x"), 1024)
	r := bytes.NewReader(page)
	if n := testing.AllocsPerRun(100, func() { r.Reset(page); readBody(r, int64(len(page)), MaxResponseBytes) }); n > 1 {
		t.Errorf("readBody of a 1 KiB body with its Content-Length: %v allocations, want 1", n)
	}
}
