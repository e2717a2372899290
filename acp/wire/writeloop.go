package wire

import (
	"bufio"
	"net"
	"sync"

	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// A frameSource is one side's view of its state machine for the writer:
// both sides' writers are the same loop (writeLoop) around a different
// source.
type frameSource struct {
	mu   *sync.Mutex // guards the state next reads
	cond *sync.Cond  // broadcast on every state change; the writer waits on it
	// next, called with mu held, returns the next frame to send (ok),
	// or reports that the connection's writer must end (end).
	next func(buf []byte) (f frame.Frame, ok, end bool)
	// last reports whether f, just written, is the connection's last
	// frame: the writer flushes it and ends.
	last func(f *frame.Frame) bool
}

// writeLoop sends src's frames on c until src says the writer must end,
// after a last frame, or on a write error (which it returns). It flushes
// whenever src has nothing to send, and writes a data frame's bytes
// straight from the state machine's buffer.
func writeLoop(c net.Conn, src frameSource) error {
	bw := bufio.NewWriterSize(c, 64<<10)
	data := make([]byte, frame.MaxDataChunk)
	var enc []byte
	for {
		src.mu.Lock()
		var f frame.Frame
		for {
			var ok, end bool
			if f, ok, end = src.next(data); end {
				src.mu.Unlock()
				return bw.Flush()
			}
			if ok {
				break
			}
			if bw.Buffered() > 0 {
				src.mu.Unlock()
				if err := bw.Flush(); err != nil {
					return err
				}
				src.mu.Lock()
				continue
			}
			src.cond.Wait()
		}
		src.mu.Unlock()
		var err error
		if enc, err = frame.Write(bw, enc, &f); err != nil {
			return err
		}
		if src.last(&f) {
			return bw.Flush()
		}
	}
}
