package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/checkfu/checkfu"
)

// DefaultMaxLineBytes is the per-line bound used when a configuration
// leaves it zero: 16 MiB, above the 10 MiB of the common Go ACP SDK and
// room for a ~5 MB screenshot after base64, below the 32 MiB of the
// TypeScript SDK. It applies to input and output alike.
const DefaultMaxLineBytes = 16 << 20

// readBufferSize is the size of the Reader's bufio buffer. Lines that fit
// in it are returned without copying.
const readBufferSize = 64 << 10

// A Reader splits newline-delimited input into lines no longer than its
// bound. It never holds more than the bound (plus its fixed 64 KiB read
// buffer) of one line in memory: its line buffer's capacity never exceeds
// the bound.
//
// A line longer than the bound is reported as a *checkfu.Refusal with code
// [CodeLineTooLong]; the Reader discards the rest of that line as it
// arrives, without buffering it, and the next call to ReadLine returns the
// line after it: the Reader resynchronises. (The [Client] does not: it
// treats any over-long input line as terminal, because the discarded line
// may have been a response and a hole in the transcript must not pass
// silently.)
//
// Empty lines (and lines holding only "\r") are skipped; a trailing "\r"
// is removed. Input that ends inside a line yields [CodeLineTruncated],
// never the partial line.
type Reader struct {
	br  *bufio.Reader
	max int
	buf []byte // accumulates a line that spans bufio buffers; cap(buf) <= max
	err error  // sticky read error
}

// NewReader returns a Reader over r with the per-line bound maxLine bytes
// (excluding the newline); maxLine <= 0 means [DefaultMaxLineBytes].
func NewReader(r io.Reader, maxLine int) *Reader {
	return newReaderSize(r, maxLine, readBufferSize)
}

// newReaderSize is NewReader with a read buffer of bufSize bytes (at least
// 16), so that tests reach the multi-buffer paths with small inputs.
func newReaderSize(r io.Reader, maxLine, bufSize int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, bufSize), max: orDefault(maxLine, DefaultMaxLineBytes)}
}

// MaxLineBytes returns the Reader's per-line bound.
func (r *Reader) MaxLineBytes() int { return r.max }

// ReadLine returns the next non-empty line without its line ending. The
// returned slice is valid only until the next call. At the end of the
// input it returns io.EOF; a read error of the underlying reader is
// returned as is, and again on every later call.
func (r *Reader) ReadLine() ([]byte, error) {
	for {
		line, err := r.readRaw()
		if err != nil {
			return nil, err
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) > 0 {
			return line, nil
		}
	}
}

// readRaw returns the next line without its newline, empty lines included.
func (r *Reader) readRaw() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.buf = r.buf[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		switch {
		case err == nil:
			frag = frag[:len(frag)-1]
			if len(r.buf) == 0 {
				if len(frag) > r.max {
					return nil, r.tooLong(len(frag))
				}
				return frag, nil
			}
			if len(r.buf)+len(frag) > r.max {
				return nil, r.tooLong(len(r.buf) + len(frag))
			}
			r.grow(frag)
			return r.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(r.buf)+len(frag) > r.max {
				n := len(r.buf) + len(frag)
				return nil, r.discard(n)
			}
			r.grow(frag)
		default:
			r.err = err
			n := len(r.buf) + len(frag)
			if n > r.max {
				return nil, r.tooLong(n)
			}
			if n > 0 && err == io.EOF {
				r.err = io.ErrUnexpectedEOF
				return nil, checkfu.Refuse(CodeLineTruncated, "acp: input ended inside a line after %d bytes", n)
			}
			return nil, err
		}
	}
}

// grow appends frag to r.buf, whose new length the caller has checked is
// within the bound; the capacity never exceeds the bound either.
func (r *Reader) grow(frag []byte) {
	if need := len(r.buf) + len(frag); need > cap(r.buf) {
		nb := make([]byte, len(r.buf), min(max(2*cap(r.buf), need, 4096), r.max))
		copy(nb, r.buf)
		r.buf = nb
	}
	r.buf = append(r.buf, frag...)
}

// discard drops the rest of an over-long line, seen bytes already read,
// through its newline, and returns the line_too_long refusal.
func (r *Reader) discard(seen int) error {
	r.buf = r.buf[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		seen += len(frag)
		if err == nil {
			return r.tooLong(seen - 1)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			r.err = err
			return r.tooLong(seen)
		}
	}
}

func (r *Reader) tooLong(n int) error {
	r.buf = r.buf[:0]
	return checkfu.Refuse(CodeLineTooLong, "acp: input line of at least %d bytes exceeds the bound of %d bytes; raise MaxLineBytes if the agent legitimately sends larger messages", n, r.max)
}

// A Writer writes newline-delimited lines no longer than its bound. It is
// safe for concurrent use: each line is written whole, never interleaved
// with another.
type Writer struct {
	max    int
	closed atomic.Bool // set by closeWith before it takes or skips mu

	mu      sync.Mutex // guards w, err and scratch
	w       io.Writer
	err     error  // sticky write error: after a partial write the stream is corrupt
	scratch []byte // reused to write a short line and its newline in one call
}

// NewWriter returns a Writer over w with the per-line bound maxLine bytes
// (excluding the newline); maxLine <= 0 means [DefaultMaxLineBytes].
func NewWriter(w io.Writer, maxLine int) *Writer {
	return &Writer{w: w, max: orDefault(maxLine, DefaultMaxLineBytes)}
}

// MaxLineBytes returns the Writer's per-line bound.
func (w *Writer) MaxLineBytes() int { return w.max }

var newline = []byte{'\n'}

// smallLine is the length below which a line and its newline are copied
// into one buffer and written with one call; longer lines take two calls.
const smallLine = 32 << 10

// WriteLine writes line followed by a newline. A line longer than the bound
// is refused with [CodeLineTooLong], and an empty line or one holding a
// newline byte with [CodeLineInvalid]; in both cases nothing is written.
// After an error of the underlying writer every later call returns it.
func (w *Writer) WriteLine(line []byte) error {
	if len(line) > w.max {
		return checkfu.Refuse(CodeLineTooLong, "acp: output line of %d bytes exceeds the bound of %d bytes; nothing was written", len(line), w.max)
	}
	if len(line) == 0 {
		return checkfu.Refuse(CodeLineInvalid, "acp: refusing to write an empty line")
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		return checkfu.Refuse(CodeLineInvalid, "acp: output line holds a newline at byte %d; nothing was written", i)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && w.closed.Load() {
		w.err = errWriterClosed
	}
	if w.err != nil {
		return w.err
	}
	var err error
	if len(line) < smallLine {
		w.scratch = append(append(w.scratch[:0], line...), '\n')
		_, err = w.w.Write(w.scratch)
	} else if _, err = w.w.Write(line); err == nil {
		_, err = w.w.Write(newline)
	}
	if err != nil {
		w.err = err
	}
	return err
}

// WriteMessage encodes m and writes it as one line, under the same bound
// and with the same errors as WriteLine.
func (w *Writer) WriteMessage(m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return checkfu.Refuse(CodeMessageInvalid, "acp: cannot encode %s message: %v", m.Method, err)
	}
	return w.WriteLine(b)
}

// errWriterClosed is the sticky error of a Writer closed by closeWith.
var errWriterClosed = errors.New("acp: write after close")

// closeWith closes cl (the writer's destination) and makes every later
// write fail. When no line is being written it closes between two lines.
// When one is, it does not wait for it: an agent that stopped reading its
// input would block that write, and so Close, forever. It closes cl under
// the write instead, which fails it; the agent then sees a line cut short
// with no newline, and a strict prefix of a JSON object is never a JSON
// message. cl must allow Close concurrently with Write, as pipes, files
// and connections do.
func (w *Writer) closeWith(cl io.Closer) error {
	w.closed.Store(true)
	if !w.mu.TryLock() {
		return cl.Close()
	}
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = errWriterClosed
	}
	return cl.Close()
}
