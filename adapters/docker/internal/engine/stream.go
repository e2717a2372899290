package engine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"

	"github.com/checkfu/checkfu"
)

// A Stream is a hijacked attach or exec connection: writes go to the
// process's stdin, reads come from its multiplexed stdout and stderr.
type Stream struct {
	conn *net.UnixConn
	r    *bufio.Reader // may already hold stream bytes read with the head

	closeOnce sync.Once
}

// Write writes to the process's stdin.
func (s *Stream) Write(p []byte) (int, error) { return s.conn.Write(p) }

// CloseWrite ends the process's stdin (EOF) and keeps reading open.
func (s *Stream) CloseWrite() error { return s.conn.CloseWrite() }

// Reader returns the raw multiplexed stream.
func (s *Stream) Reader() io.Reader { return s.r }

// Close closes the connection.
func (s *Stream) Close() error {
	var err error
	s.closeOnce.Do(func() { err = s.conn.Close() })
	return err
}

// Stream numbers of the multiplexed stream's frame header.
const (
	streamStdin  = 0
	streamStdout = 1
	streamStderr = 2
)

// maxFrame bounds one multiplexed frame; the engine writes at most 32 KiB
// per frame, so a larger header is not the engine's.
const maxFrame = 1 << 20

// Demux copies a multiplexed stream (an 8-byte header [stream, 0, 0, 0,
// length big-endian uint32] before each frame, used whenever Tty is
// false) into stdout and stderr until r ends. A nil writer discards. It
// returns nil at a clean end of stream.
func Demux(r io.Reader, stdout, stderr io.Writer) error {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			return &checkfu.Refusal{Code: CodeEngineRequestFailed, Message: "docker: stream ended inside a frame header", Err: err}
		}
		n := binary.BigEndian.Uint32(hdr[4:])
		if hdr[1] != 0 || hdr[2] != 0 || hdr[3] != 0 || n > maxFrame {
			return errorf("stream frame header %x is not the engine's", hdr)
		}
		var w io.Writer
		switch hdr[0] {
		case streamStdout:
			w = stdout
		case streamStderr:
			w = stderr
		case streamStdin:
			w = stdout // the engine writes stdin frames only for a TTY echo
		default:
			return errorf("stream frame names stream %d", hdr[0])
		}
		if _, err := io.CopyN(w, r, int64(n)); err != nil {
			if errors.Is(err, io.EOF) {
				return &checkfu.Refusal{Code: CodeEngineRequestFailed, Message: "docker: stream ended inside a frame", Err: io.ErrUnexpectedEOF}
			}
			return err
		}
	}
}

// isCode reports whether err is a Refusal with code.
func isCode(err error, code checkfu.Code) bool { return err != nil && errors.Is(err, code) }

// retag returns err's Refusal with its code replaced.
func retag(err error, code checkfu.Code) error {
	var r *checkfu.Refusal
	if errors.As(err, &r) {
		return &checkfu.Refusal{Code: code, Message: r.Message, Err: r.Err}
	}
	return err
}
