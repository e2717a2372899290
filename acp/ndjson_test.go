package acp_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/internal/alloctest"
)

// readAll reads every line (or error) from r until io.EOF or a read error
// that repeats, rendering errors as "!code".
func readAll(r *acp.Reader) []string {
	var out []string
	for i := 0; i < 1000; i++ {
		line, err := r.ReadLine()
		if err == io.EOF {
			return out
		}
		if err != nil {
			out = append(out, "!"+codeOf(err))
			if !errors.Is(err, acp.CodeLineTooLong) {
				return out
			}
			continue
		}
		out = append(out, string(line))
	}
	panic("reader did not end")
}

func codeOf(err error) string {
	for _, c := range []error{acp.CodeLineTooLong, acp.CodeLineTruncated, acp.CodeLineInvalid, acp.CodeMessageInvalid} {
		if errors.Is(err, c) {
			return c.Error()
		}
	}
	return err.Error()
}

func TestReaderBound(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // spans several bufio buffers
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"lines", "a\nbb\n", 10, []string{"a", "bb"}},
		{"crlf and blank lines", "a\r\n\n\r\nb\n", 10, []string{"a", "b"}},
		{"exactly the bound", "1234567890\n", 10, []string{"1234567890"}},
		{"one over, then resync", "12345678901\nok\n", 10, []string{"!line_too_long", "ok"}},
		{"over-long last line without newline", "ok\n12345678901", 10, []string{"ok", "!line_too_long"}},
		{"truncated last line", "ok\npartial", 10, []string{"ok", "!line_truncated"}},
		{"long line within bound", long + "\nz\n", 300 << 10, []string{long, "z"}},
		{"long line over bound", long + "\nz\n", 100 << 10, []string{"!line_too_long", "z"}},
		{"long line one over", long + "\n", len(long) - 1, []string{"!line_too_long"}},
		{"long line at the bound", long + "\n", len(long), []string{long}},
		{"json array line", `[{"a":1},{"b":2}]` + "\n", 100, []string{`[{"a":1},{"b":2}]`}},
	}
	for _, tt := range tests {
		for _, chunk := range []string{"whole", "onebyte"} {
			var src io.Reader = strings.NewReader(tt.in)
			if chunk == "onebyte" {
				if len(tt.in) > 1<<16 {
					continue
				}
				src = iotest.OneByteReader(src)
			}
			got := readAll(acp.NewReader(src, tt.max))
			if !equal(got, tt.want) {
				t.Errorf("%s/%s: ReadLine = %.200q, want %.200q", tt.name, chunk, got, tt.want)
			}
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReaderReadErrorIsSticky(t *testing.T) {
	boom := errors.New("boom")
	r := acp.NewReader(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(boom)), 10)
	if l, err := r.ReadLine(); err != nil || string(l) != "a" {
		t.Fatalf("ReadLine = %q, %v", l, err)
	}
	for i := 0; i < 2; i++ {
		if _, err := r.ReadLine(); !errors.Is(err, boom) {
			t.Fatalf("ReadLine #%d err = %v, want boom", i, err)
		}
	}
}

func TestReaderDefaultBound(t *testing.T) {
	if got := acp.NewReader(nil, 0).MaxLineBytes(); got != acp.DefaultMaxLineBytes || got < 10<<20 {
		t.Errorf("default read bound = %d, want DefaultMaxLineBytes >= 10 MiB", got)
	}
	if got := acp.NewWriter(nil, -1).MaxLineBytes(); got != acp.DefaultMaxLineBytes {
		t.Errorf("default write bound = %d, want %d", got, acp.DefaultMaxLineBytes)
	}
}

func TestWriterBound(t *testing.T) {
	tests := []struct {
		line string
		code string // "" for success
	}{
		{"1234567890", ""},
		{"12345678901", "line_too_long"},
		{"", "line_invalid"},
		{"ab\ncd", "line_invalid"},
		{strings.Repeat("y", 40<<10), "line_too_long"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		err := acp.NewWriter(&buf, 10).WriteLine([]byte(tt.line))
		if tt.code == "" {
			if err != nil || buf.String() != tt.line+"\n" {
				t.Errorf("WriteLine(%.20q) = %v, wrote %.20q", tt.line, err, buf.String())
			}
			continue
		}
		if got := codeOf(err); got != tt.code {
			t.Errorf("WriteLine(%.20q) err = %v, want code %s", tt.line, err, tt.code)
		}
		if buf.Len() != 0 {
			t.Errorf("WriteLine(%.20q) wrote %d bytes after refusing", tt.line, buf.Len())
		}
	}
	// A long line within the bound is written whole (two writes).
	var buf bytes.Buffer
	long := strings.Repeat("z", 100<<10)
	if err := acp.NewWriter(&buf, 1<<20).WriteLine([]byte(long)); err != nil || buf.String() != long+"\n" {
		t.Errorf("long WriteLine = %v, wrote %d bytes", err, buf.Len())
	}
}

func TestWriterErrorIsSticky(t *testing.T) {
	w := acp.NewWriter(errWriter{}, 10)
	for i := 0; i < 2; i++ {
		if err := w.WriteLine([]byte("a")); err == nil || err.Error() != "closed" {
			t.Fatalf("WriteLine #%d = %v, want closed", i, err)
		}
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

func TestLineTooLongErrorText(t *testing.T) {
	_, err := acp.NewReader(strings.NewReader("12345678901\n"), 10).ReadLine()
	const want = "refused: line_too_long: acp: input line of at least 11 bytes exceeds the bound of 10 bytes; raise MaxLineBytes if the agent legitimately sends larger messages"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant   %s", err, want)
	}
}

// repeatReader yields n bytes of 'a' then "\nnext\n", without holding them.
type repeatReader struct{ n int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		k := min(len(p), r.n)
		for i := range p[:k] {
			p[i] = 'a'
		}
		r.n -= k
		return k, nil
	}
	if r.n == 0 {
		r.n = -1
		return copy(p, "\nnext\n"), nil
	}
	return 0, io.EOF
}

// TestReaderDoesNotBufferOverlongLines reads a 64 MiB line with a 1 MiB
// bound and checks the bytes allocated stay near the bound, not the line.
// TotalAlloc counts the whole process, so the test runs alone in a child
// process (alloctest.Alone).
func TestReaderDoesNotBufferOverlongLines(t *testing.T) {
	if !alloctest.Alone(t) {
		return
	}
	const bound, line = 1 << 20, 64 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := acp.NewReader(&repeatReader{n: line}, bound)
	_, err := r.ReadLine()
	next, err2 := r.ReadLine()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, acp.CodeLineTooLong) || err2 != nil || string(next) != "next" {
		t.Fatalf("ReadLine = %v, then %q, %v", err, next, err2)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8*bound { // growth of the accumulation buffer, not the line
		t.Errorf("reading a %d-byte line with bound %d allocated %d bytes", line, bound, got)
	}
}

// yieldingWriter makes each Write atomic, then yields, so that another
// goroutine's Write lands between two calls whenever nothing else keeps
// them together.
type yieldingWriter struct{ lockedWriter }

func (y *yieldingWriter) Write(p []byte) (int, error) {
	n, err := y.lockedWriter.Write(p)
	runtime.Gosched()
	return n, err
}

// TestWriterConcurrentLinesNeverInterleave: long lines (each written in
// two calls: the line, then its newline) from many goroutines arrive
// whole: only WriteLine's own mutex keeps the two calls together.
func TestWriterConcurrentLinesNeverInterleave(t *testing.T) {
	var buf bytes.Buffer
	w := acp.NewWriter(&yieldingWriter{lockedWriter{w: &buf}}, 0)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				n := (1 + i%2) * 40 << 10 // 40 KiB, 80 KiB
				if err := w.WriteLine(bytes.Repeat([]byte{byte('a' + g)}, n)); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	r := acp.NewReader(&buf, 0)
	lines := 0
	for {
		line, err := r.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(line, line[:1]) != len(line) {
			t.Fatalf("line %d mixes writers", lines)
		}
		lines++
	}
	if lines != 160 {
		t.Errorf("read %d lines, want 160", lines)
	}
}
