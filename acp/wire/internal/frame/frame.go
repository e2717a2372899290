// Package frame is the openProcess wire's frame codec: every frame is
// type:u8 | length:u32 big-endian | payload[length], docs/wire.md lays
// out each payload. It is internal so that the wire's format can change
// with the package that speaks it; package wire and its conformance suite
// wiretest are its only users.
//
// Invariants: a Decoder refuses a claimed length over its bound before
// reading the payload and grows its buffer only as payload bytes arrive;
// Parse is strict (a payload shorter or longer than its type's layout, an
// unknown type, a boolean other than 0 or 1, or a refusal code outside
// [a-z][a-z0-9_]* is refused with [CodeProtocolError]), so Append(Parse(b))
// gives back b.
package frame

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/checkfu/checkfu"
)

// A Type identifies a frame. The numbering is part of the wire format.
type Type uint8

// The frame types. R→P frames travel from the Runner to the provider,
// P→R frames the other way. docs/wire.md describes each field.
const (
	TypeOpen     Type = 1  // R→P: start the instance's process
	TypeResume   Type = 2  // R→P: reattach to a process, with the stdout cursor
	TypeAttached Type = 3  // P→R: open or resume accepted; stdin position and window
	TypeRefuse   Type = 4  // P→R: a typed refusal (code, offset, message)
	TypeWindow   Type = 5  // P→R: stdin credit: absolute limit and accepted offset
	TypeStdin    Type = 6  // R→P: stdin bytes at an absolute input offset
	TypeStdinEnd Type = 7  // R→P: stdin ends at this final offset
	TypeStdout   Type = 8  // P→R: stdout bytes at an absolute offset
	TypeStderr   Type = 9  // P→R: stderr bytes at an offset, with the drop counter
	TypeOutEnd   Type = 10 // P→R: stdout ended at this final offset
	TypeErrEnd   Type = 11 // P→R: stderr ended at this final offset
	TypeExit     Type = 12 // P→R: the process was reaped, with its status
	TypeAck      Type = 13 // R→P: stdout delivered up to this offset
	TypeDone     Type = 14 // R→P: the Runner has everything; forget the process
	TypeKill     Type = 15 // R→P: terminate the process
	typeSentinel Type = 16
)

// MaxPayload is the largest payload a frame may claim. A decoder refuses
// a larger claim before reading it.
const MaxPayload = 1 << 20

const (
	HeaderLen         = 5          // type byte + big-endian uint32 payload length
	MaxDataChunk      = 1<<20 - 64 // data bytes per stdin/stdout frame
	readChunk         = 32 << 10   // payloads are read (and grown) this much at a time
	ProcessIDLen      = 16         // bytes in a ProcessID
	ProtocolVersion   = 1          // the version an open frame carries
	MaxRefusalMessage = 1024       // bytes of a refusal's message
	// MaxHelloPayload is the largest first frame a provider reads: a
	// resume (id and cursor); an open is smaller.
	MaxHelloPayload = ProcessIDLen + 8
)

var typeNames = [...]string{
	TypeOpen: "open", TypeResume: "resume", TypeAttached: "attached", TypeRefuse: "refuse",
	TypeWindow: "window", TypeStdin: "stdin", TypeStdinEnd: "stdin_end", TypeStdout: "stdout",
	TypeStderr: "stderr", TypeOutEnd: "out_end", TypeErrEnd: "err_end", TypeExit: "exit",
	TypeAck: "ack", TypeDone: "done", TypeKill: "kill",
}

// String returns the snake_case name of t, or "type(N)".
func (t Type) String() string {
	if t > 0 && t < typeSentinel {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// A ProcessID names one process of a provider instance; it is chosen at
// random by the provider at open and presented again on resume.
type ProcessID [ProcessIDLen]byte

// A Frame is one decoded wire frame. Which fields are meaningful depends on
// Type; the others are zero. Data aliases the decoder's buffer and is valid
// only until the next Decode.
type Frame struct {
	Type Type

	ID      ProcessID // open (chosen by the Runner, so a retried open is idempotent), attached, resume
	Version uint16    // open

	Offset uint64 // stdin, stdout, stderr: first byte; stdin_end, out_end, err_end: final offset; ack: delivered; resume: stdout cursor; refuse: offset concerned
	Limit  uint64 // window, attached: absolute stdin credit limit
	// Accepted is the provider's stdin accepted offset (window, attached).
	Accepted uint64
	// Dropped is stderr's drop counter (stderr, err_end).
	Dropped uint64
	// Window is output_window_bytes (attached).
	Window uint64
	// Low and Head bound the stdout journal (attached).
	Low, Head uint64
	// StdinEnded reports, in attached, whether the provider has applied
	// stdin_end.
	StdinEnded bool
	// Status is the exit status (exit): the exit code, or 128+signal.
	Status int32

	Code    checkfu.Code // refuse
	Message string       // refuse

	Data []byte // stdin, stdout, stderr
}

// protocolErr returns a protocol_error refusal.
func protocolErr(format string, args ...any) *checkfu.Refusal {
	return checkfu.Refuse(CodeProtocolError, "wire: "+format, args...)
}

// Append appends the encoding of f to dst. It returns an error (code
// protocol_error) when f is not encodable: an unknown type, a payload over
// MaxPayload, or an over-long refusal message.
func Append(dst []byte, f *Frame) ([]byte, error) {
	start := len(dst)
	dst = append(dst, byte(f.Type), 0, 0, 0, 0)
	u64 := binary.BigEndian.AppendUint64
	switch f.Type {
	case TypeOpen:
		dst = append(dst, f.ID[:]...)
		dst = binary.BigEndian.AppendUint16(dst, f.Version)
	case TypeResume:
		dst = append(dst, f.ID[:]...)
		dst = u64(dst, f.Offset)
	case TypeAttached:
		dst = append(dst, f.ID[:]...)
		dst = u64(dst, f.Accepted)
		dst = u64(dst, f.Limit)
		dst = u64(dst, f.Window)
		dst = u64(dst, f.Low)
		dst = u64(dst, f.Head)
		dst = append(dst, boolByte(f.StdinEnded))
	case TypeRefuse:
		if !ValidCode([]byte(f.Code)) || len(f.Code) > 255 || len(f.Message) > MaxRefusalMessage {
			return dst[:start], protocolErr("refusal code %q or message too long", f.Code)
		}
		dst = u64(dst, f.Offset)
		dst = append(dst, byte(len(f.Code)))
		dst = append(dst, f.Code...)
		dst = append(dst, f.Message...)
	case TypeWindow:
		dst = u64(dst, f.Accepted)
		dst = u64(dst, f.Limit)
	case TypeStdin, TypeStdout:
		dst = u64(dst, f.Offset)
		dst = append(dst, f.Data...)
	case TypeStderr:
		dst = u64(dst, f.Offset)
		dst = u64(dst, f.Dropped)
		dst = append(dst, f.Data...)
	case TypeStdinEnd, TypeOutEnd, TypeAck:
		dst = u64(dst, f.Offset)
	case TypeErrEnd:
		dst = u64(dst, f.Offset)
		dst = u64(dst, f.Dropped)
	case TypeExit:
		dst = binary.BigEndian.AppendUint32(dst, uint32(f.Status))
	case TypeDone, TypeKill:
	default:
		return dst[:start], protocolErr("cannot encode frame type %v", f.Type)
	}
	n := len(dst) - start - HeaderLen
	if n > MaxPayload {
		return dst[:start], protocolErr("%v payload of %d bytes exceeds %d", f.Type, n, MaxPayload)
	}
	binary.BigEndian.PutUint32(dst[start+1:], uint32(n))
	return dst, nil
}

// Write writes f to w, encoding the header into scratch (returned
// for reuse) and writing a data frame's bytes straight from f.Data, so
// bulk data is not copied into the encoding buffer.
func Write(w io.Writer, scratch []byte, f *Frame) ([]byte, error) {
	data := f.Data
	if len(data) > MaxPayload {
		return scratch, protocolErr("%v payload of %d bytes exceeds %d", f.Type, len(data), MaxPayload)
	}
	hdr := *f
	hdr.Data = nil
	scratch, err := Append(scratch[:0], &hdr)
	if err != nil {
		return scratch, err
	}
	if len(data) == 0 {
		_, err = w.Write(scratch)
		return scratch, err
	}
	n := binary.BigEndian.Uint32(scratch[1:HeaderLen]) + uint32(len(data))
	if n > MaxPayload {
		return scratch, protocolErr("%v payload of %d bytes exceeds %d", f.Type, n, MaxPayload)
	}
	binary.BigEndian.PutUint32(scratch[1:HeaderLen], n)
	if _, err = w.Write(scratch); err == nil {
		_, err = w.Write(data)
	}
	return scratch, err
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// A Decoder reads frames from a stream. Its buffer grows only as payload
// bytes actually arrive (to at most twice what has arrived plus one
// 32 KiB read), never to a claimed length, and it refuses a claimed
// length over MaxPayload before reading it.
type Decoder struct {
	r   io.Reader
	hdr [HeaderLen]byte
	buf []byte
	max uint32 // the payload bound; zero means MaxPayload
}

// NewDecoder returns a Decoder reading from r. Wrap r in a bufio.Reader
// when it is an unbuffered connection.
func NewDecoder(r io.Reader) *Decoder { return &Decoder{r: r} }

// NewBoundedDecoder returns a Decoder that refuses, at its header, a
// frame claiming more than max payload bytes.
func NewBoundedDecoder(r io.Reader, max uint32) *Decoder { return &Decoder{r: r, max: max} }

// Decode reads the next frame into f. It returns io.EOF at a clean end
// between frames, io.ErrUnexpectedEOF inside a frame, and a Refusal with
// code protocol_error for a malformed frame.
func (d *Decoder) Decode(f *Frame) error {
	if _, err := io.ReadFull(d.r, d.hdr[:]); err != nil {
		return err
	}
	t := Type(d.hdr[0])
	n := binary.BigEndian.Uint32(d.hdr[1:])
	limit := uint32(MaxPayload)
	if d.max != 0 {
		limit = d.max
	}
	if n > limit {
		return protocolErr("%v frame claims %d payload bytes, more than %d", t, n, limit)
	}
	d.buf = d.buf[:0]
	for remaining := int(n); remaining > 0; {
		step := min(remaining, readChunk)
		d.buf = growLen(d.buf, step)
		if _, err := io.ReadFull(d.r, d.buf[len(d.buf)-step:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		remaining -= step
	}
	return Parse(f, t, d.buf)
}

// growLen extends b by n bytes, reusing capacity when it can.
func growLen(b []byte, n int) []byte {
	if len(b)+n <= cap(b) {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
}

// Parse decodes the payload p of a frame of type t into f, strictly:
// a payload shorter or longer than its type requires is a protocol error.
// f.Data aliases p.
func Parse(f *Frame, t Type, p []byte) error {
	*f = Frame{Type: t}
	c := cursor{p: p}
	switch t {
	case TypeOpen:
		c.id(&f.ID)
		f.Version = c.u16()
	case TypeResume:
		c.id(&f.ID)
		f.Offset = c.u64()
	case TypeAttached:
		c.id(&f.ID)
		f.Accepted = c.u64()
		f.Limit = c.u64()
		f.Window = c.u64()
		f.Low = c.u64()
		f.Head = c.u64()
		b := c.byte1()
		if b > 1 {
			c.bad = true
		}
		f.StdinEnded = b == 1
	case TypeRefuse:
		f.Offset = c.u64()
		n := int(c.byte1())
		code := c.take(n)
		if n == 0 {
			c.bad = true
		}
		if !ValidCode(code) {
			c.bad = true
		}
		f.Code = checkfu.Code(code)
		msg := c.rest()
		if len(msg) > MaxRefusalMessage {
			c.bad = true
		}
		f.Message = string(msg)
	case TypeWindow:
		f.Accepted = c.u64()
		f.Limit = c.u64()
	case TypeStdin, TypeStdout:
		f.Offset = c.u64()
		f.Data = c.rest()
	case TypeStderr:
		f.Offset = c.u64()
		f.Dropped = c.u64()
		f.Data = c.rest()
	case TypeStdinEnd, TypeOutEnd, TypeAck:
		f.Offset = c.u64()
	case TypeErrEnd:
		f.Offset = c.u64()
		f.Dropped = c.u64()
	case TypeExit:
		f.Status = int32(c.u32())
	case TypeDone, TypeKill:
	default:
		return protocolErr("unknown frame type %d", uint8(t))
	}
	if c.bad || len(c.p) != 0 {
		return protocolErr("malformed %v frame (%d payload bytes)", t, len(p))
	}
	if len(f.Data) > 0 && f.Offset+uint64(len(f.Data)) < f.Offset {
		return protocolErr("%v frame at offset %d overflows", t, f.Offset)
	}
	return nil
}

// ValidCode reports whether a refusal code has the module's form,
// [a-z][a-z0-9_]*, so a provider's code is safe to print and to compare.
func ValidCode(b []byte) bool {
	for i, c := range b {
		if !('a' <= c && c <= 'z' || i > 0 && ('0' <= c && c <= '9' || c == '_')) {
			return false
		}
	}
	return len(b) > 0
}

// A cursor consumes a payload; any short read sets bad.
type cursor struct {
	p   []byte
	bad bool
}

func (c *cursor) take(n int) []byte {
	if len(c.p) < n {
		c.bad = true
		c.p = nil
		return nil
	}
	b := c.p[:n]
	c.p = c.p[n:]
	return b
}

func (c *cursor) rest() []byte { b := c.p; c.p = nil; return b }

func (c *cursor) byte1() byte {
	if b := c.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (c *cursor) u16() uint16 {
	if b := c.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (c *cursor) u32() uint32 {
	if b := c.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (c *cursor) u64() uint64 {
	if b := c.take(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (c *cursor) id(dst *ProcessID) {
	if b := c.take(ProcessIDLen); b != nil {
		copy(dst[:], b)
	}
}
