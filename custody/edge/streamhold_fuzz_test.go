package edge

import (
	"bytes"
	"testing"
)

// FuzzStreamScreenHold: any stream, cut into pieces anywhere, through the
// screen of a fixed key and what a relay does with its hold (heldRelay):
// no input panics it, every hold is within what was passed and held,
// written and held are always the stream so far in order, and the
// reader gets the stream byte for byte at its end unless a piece was
// refused, then a prefix of it without the key; a stream with the key
// is refused.
func FuzzStreamScreenHold(f *testing.F) {
	key := []byte("sk-test-0123456789abcdefghijklmnop")
	for _, d := range []string{"anthropic", "anthropic tool input", "responses", "chat", "gemini"} {
		f.Add(append(deltaEvent(d, "hello sk-test-0123456789", false), deltaEvent(d, "abcdefghijklmnop", false)...), []byte{40, 3, 200})
		f.Add(append(deltaEvent(d, "sk-test-0123456789ab", false), pingEvent...), []byte{1})
	}
	f.Add([]byte("\ufeffdata: {\"text\":\rdata: \"sk-test-0123456789\"}\r\r"), []byte{7, 7})
	f.Add([]byte("data: {\"text\"\ndata: :\"sk-test-01234567\"}\r\n\r\n"), []byte{0, 25})
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		s, done := screenOf(key)
		defer done()
		var out, held []byte
		refused := false
		rest := stream
		for i := 0; len(rest) > 0 && !refused; i++ {
			n := len(rest)
			if i < len(cuts) {
				n = min(n, int(cuts[i])+1)
			}
			p := rest[:n]
			rest = rest[n:]
			if s.screen(p) {
				refused = true
				break
			}
			hold := s.hold()
			all := append(held, p...)
			if hold < 0 || hold > int64(len(all)) {
				t.Fatalf("a hold of %d with %d bytes held and passed", hold, len(all))
			}
			out = append(out, all[:int64(len(all))-hold]...)
			held = append([]byte(nil), all[int64(len(all))-hold:]...)
			if sofar := stream[:len(stream)-len(rest)]; !bytes.Equal(append(bytes.Clone(out), held...), sofar) {
				t.Fatalf("written %q and held %q are not the stream so far %q", out, held, sofar)
			}
		}
		if !refused {
			if bytes.Contains(stream, key) {
				t.Fatalf("the key passed in %q", stream)
			}
			out = append(out, held...)
			if !bytes.Equal(out, stream) {
				t.Fatalf("the reader got %q of %q", out, stream)
			}
			return
		}
		if !bytes.HasPrefix(stream, out) || bytes.Contains(out, key) {
			t.Fatalf("refused, the reader got %q of %q", out, stream)
		}
	})
}
