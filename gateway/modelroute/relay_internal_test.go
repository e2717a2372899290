package modelroute

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
)

// relayReference is Relay as it was first written, kept to hold the
// faster Relay to it: each event's lines gathered apart, its data lines
// joined apart, then the event copied into the batch.
func relayReference(dst io.Writer, flush func(), src io.Reader, d Dialect, screen Screen) (Usage, error) {
	ur := usageReader{d: d}
	br := bufio.NewReaderSize(src, MaxBatchBytes)
	var ev, data, batch []byte
	send := func() error {
		if len(batch) == 0 {
			return nil
		}
		if screen != nil {
			if _, err := screen(batch); err != nil {
				return err
			}
		}
		if _, err := dst.Write(batch); err != nil {
			return err
		}
		if flush != nil {
			flush()
		}
		batch = batch[:0]
		return nil
	}
	for {
		line, err := readLine(br, MaxEventBytes-len(ev))
		if err != nil {
			if errors.Is(err, io.EOF) {
				return ur.u, send()
			}
			return ur.u, err
		}
		ev = append(ev, line...)
		body := bytes.TrimRight(line, "\r\n")
		if v, ok := bytes.CutPrefix(body, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
		if len(body) != 0 {
			continue
		}
		batch = append(batch, ev...)
		if len(data) > 0 && !bytes.Equal(data, []byte("[DONE]")) {
			ur.event(data)
		}
		ev, data = ev[:0], data[:0]
		if br.Buffered() == 0 {
			if err := send(); err != nil {
				return ur.u, err
			}
		}
	}
}

// pieces reads its stream in the sizes it is given, as a network
// connection delivers it.
type pieces struct {
	s     []byte
	sizes []int
}

func (p *pieces) Read(b []byte) (int, error) {
	if len(p.s) == 0 {
		return 0, io.EOF
	}
	n := len(p.s)
	if len(p.sizes) > 0 {
		n = min(n, max(1, p.sizes[0]))
		p.sizes = p.sizes[1:]
	}
	n = copy(b, p.s[:n])
	p.s = p.s[n:]
	return n, nil
}

// TestRelayAgreesWithItsReference: on any stream of event-like lines, in
// any pieces, with a screen that refuses a batch holding a marker,
// Relay writes the same batches, reads the same usage and ends with the
// same error as the reference.
func TestRelayAgreesWithItsReference(t *testing.T) {
	lines := []string{
		"", "\r", "data: [DONE]", "data:", "data: x", "data:{\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}",
		"data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":7,\"cache_read_input_tokens\":2}}}",
		"data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":9}}",
		"data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":6}}}",
		"data: {\"usage\":", "data: {\"output_tokens\":1}}", "event: message_delta", ": comment", "data:  two spaces",
		"data: usage\"", "data: REFUSE", "id: 1\r", strings.Repeat("y", 300),
	}
	rapid.Check(t, func(t *rapid.T) {
		var s strings.Builder
		for _, l := range rapid.SliceOfN(rapid.SampledFrom(lines), 0, 60).Draw(t, "lines") {
			s.WriteString(l)
			s.WriteString(rapid.SampledFrom([]string{"\n", "\r\n", "\n\n"}).Draw(t, "end"))
		}
		if rapid.Bool().Draw(t, "cut") {
			s.WriteString("data: unfinished")
		}
		stream := []byte(s.String())
		sizes := rapid.SliceOfN(rapid.IntRange(1, 400), 0, 40).Draw(t, "sizes")
		d := rapid.SampledFrom([]Dialect{AnthropicMessages, OpenAIResponses, OpenAIChat}).Draw(t, "dialect")
		run := func(relay func(io.Writer, func(), io.Reader, Dialect, Screen) (Usage, error)) (string, []string, Usage, error) {
			var out bytes.Buffer
			var batches []string
			flushes := 0
			u, err := relay(&out, func() { flushes++ }, &pieces{stream, sizes}, d, func(p []byte) (int, error) {
				batches = append(batches, string(p))
				if bytes.Contains(p, []byte("REFUSE")) {
					return 0, checkfu.Refuse(CodeModelEventTooLarge, "refused")
				}
				return 0, nil
			})
			if flushes != len(batches) && err == nil {
				t.Fatalf("%d flushes for %d batches", flushes, len(batches))
			}
			return out.String(), batches, u, err
		}
		out, batches, u, err := run(Relay)
		wantOut, wantBatches, wantU, wantErr := run(relayReference)
		if out != wantOut || u != wantU || (err == nil) != (wantErr == nil) || strings.Join(batches, "|") != strings.Join(wantBatches, "|") {
			t.Fatalf("Relay wrote %q (batches %q), usage %+v, %v;\nthe reference %q (batches %q), %+v, %v", out, batches, u, err, wantOut, wantBatches, wantU, wantErr)
		}
		if err != nil && wantErr.Error() != err.Error() {
			t.Fatalf("Relay ended %v, the reference %v", err, wantErr)
		}
	})
}

// TestTrimEOL: trimEOL is bytes.TrimRight with "\r\n".
func TestTrimEOL(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := []byte(rapid.StringOfN(rapid.SampledFrom([]rune{'a', '\r', '\n', ' '}), 0, 12, -1).Draw(t, "line"))
		if got, want := trimEOL(b), bytes.TrimRight(b, "\r\n"); !bytes.Equal(got, want) {
			t.Fatalf("trimEOL(%q) = %q, want %q", b, got, want)
		}
	})
}

// TestRelayWritesOnlyScreenedBatches: with the screen and the writes on
// the writer's goroutine, every write is of the batch the screen passed
// last and not yet written, whole; after the screen refuses a batch
// nothing more is written, and Relay returns the refusal; dst, flush
// and the screen are never called after Relay returns.
func TestRelayWritesOnlyScreenedBatches(t *testing.T) {
	lines := []string{"", "data: x", "data: REFUSE", "event: e", strings.Repeat("y", 5000)}
	rapid.Check(t, func(t *rapid.T) {
		var s strings.Builder
		for _, l := range rapid.SliceOfN(rapid.SampledFrom(lines), 0, 80).Draw(t, "lines") {
			s.WriteString(l + "\n")
		}
		sizes := rapid.SliceOfN(rapid.IntRange(1, 20000), 0, 40).Draw(t, "sizes")
		var passed []byte
		refused, returned := false, false
		var out bytes.Buffer
		screen := func(p []byte) (int, error) {
			if returned || refused || passed != nil {
				t.Fatalf("screen called after Relay returned (%v), after a refusal (%v), or before the batch it passed was written", returned, refused)
			}
			if bytes.Contains(p, []byte("REFUSE")) {
				refused = true
				return 0, checkfu.Refuse(CodeModelEventTooLarge, "refused")
			}
			passed = bytes.Clone(p)
			return 0, nil
		}
		dst := writerFunc(func(p []byte) (int, error) {
			if returned || !bytes.Equal(p, passed) {
				t.Fatalf("wrote %q after Relay returned (%v), or not the batch the screen passed last (%q)", p, returned, passed)
			}
			passed = nil
			return out.Write(p)
		})
		_, err := Relay(dst, func() {
			if returned {
				t.Fatal("flushed after Relay returned")
			}
		}, &pieces{[]byte(s.String()), sizes}, OpenAIChat, screen)
		returned = true
		if refused != (err != nil) || bytes.Contains(out.Bytes(), []byte("REFUSE")) {
			t.Fatalf("refused %v, Relay returned %v, wrote %q", refused, err, out.String())
		}
	})
}

// writerFunc is an io.Writer of a function.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
