package acp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"pgregory.net/rapid"
)

// chunkReader returns data in the chunk sizes drawn by the test.
type chunkReader struct {
	data  []byte
	sizes []int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n, c.sizes = c.sizes[0], c.sizes[1:]
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func genMessage(t *rapid.T, label string) acp.Message {
	text := rapid.StringMatching(`[a-z\x{e9}"\\ \n\t]{0,40}`).Draw(t, label+"text")
	params, _ := json.Marshal(map[string]string{"t": text})
	switch rapid.IntRange(0, 3).Draw(t, label+"kind") {
	case 0:
		return acp.Message{ID: acp.IntID(rapid.Int64().Draw(t, label+"id")), Method: "m/" + rapid.StringMatching(`[a-z/]{0,8}`).Draw(t, label+"method"), Params: params}
	case 1:
		return acp.Message{Method: "session/update", Params: params}
	case 2:
		return acp.Message{ID: acp.StringID(text), Result: params}
	default:
		return acp.Message{ID: acp.IntID(rapid.Int64().Draw(t, label+"id")), Error: &acp.RPCError{Code: -32000, Message: text}}
	}
}

// TestPropertyChunkingIsInvisible: any sequence of messages (single or
// batched), written with Writer and split at arbitrary chunk boundaries,
// decodes to the same messages.
func TestPropertyChunkingIsInvisible(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var buf bytes.Buffer
		w := acp.NewWriter(&buf, 0)
		var want []string
		for i, n := 0, rapid.IntRange(0, 20).Draw(t, "n"); i < n; i++ {
			batch := rapid.IntRange(0, 3).Draw(t, "batch")
			if batch == 0 {
				m := genMessage(t, "m")
				b, _ := json.Marshal(m)
				want = append(want, string(b))
				if err := w.WriteMessage(m); err != nil {
					t.Fatal(err)
				}
				continue
			}
			var elems []acp.Message
			for j := 0; j < batch; j++ {
				m := genMessage(t, "b")
				b, _ := json.Marshal(m)
				want = append(want, string(b))
				elems = append(elems, m)
			}
			line, _ := json.Marshal(elems)
			if err := w.WriteLine(line); err != nil {
				t.Fatal(err)
			}
		}
		sizes := rapid.SliceOf(rapid.IntRange(1, 64)).Draw(t, "chunks")
		r := acp.NewReader(&chunkReader{data: buf.Bytes(), sizes: sizes}, 0)
		var got []string
		var msgs []acp.Message
		for {
			line, err := r.ReadLine()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("ReadLine: %v", err)
			}
			msgs, err = acp.ParseLine(msgs[:0], line)
			if err != nil {
				t.Fatalf("ParseLine(%s): %v", line, err)
			}
			for _, m := range msgs {
				b, _ := json.Marshal(m)
				got = append(got, string(b))
			}
		}
		if !equal(got, want) {
			t.Fatalf("decoded %q\nwant %q", got, want)
		}
	})
}

// TestPropertyOverlongLinesAlwaysError: with any bound, a line longer than
// the bound is always line_too_long (on read and on write), a line within
// it never is, and the reader resynchronises on the line after.
func TestPropertyOverlongLinesAlwaysError(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		max := rapid.IntRange(1, 300<<10).Draw(t, "max")
		n := rapid.IntRange(1, 300<<10).Draw(t, "n")
		line := bytes.Repeat([]byte{'a'}, n)
		werr := acp.NewWriter(io.Discard, max).WriteLine(line)
		input := append(append(line, '\n'), "next\n"...)
		sizes := rapid.SliceOf(rapid.IntRange(1, 128<<10)).Draw(t, "chunks")
		r := acp.NewReader(&chunkReader{data: input, sizes: sizes}, max)
		got, rerr := r.ReadLine()
		if n > max {
			if !errors.Is(werr, acp.CodeLineTooLong) || !errors.Is(rerr, acp.CodeLineTooLong) {
				t.Fatalf("line of %d over bound %d: write err %v, read err %v", n, max, werr, rerr)
			}
		} else if werr != nil || rerr != nil || len(got) != n {
			t.Fatalf("line of %d within bound %d: write err %v, read %d bytes, err %v", n, max, werr, len(got), rerr)
		}
		if next, err := r.ReadLine(); (err != nil || string(next) != "next") && max >= 4 {
			t.Fatalf("after a line of %d (bound %d): ReadLine = %q, %v, want next", n, max, next, err)
		}
	})
}
