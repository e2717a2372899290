package door

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
)

// MaxLineBytes bounds one MCP message (a line, its newline included) in
// either direction: 16 MiB, acp's default line bound, which holds a
// screenshot after base64. A longer line ends the relay with
// CodeRelayLineTooLong, and nothing of it is forwarded.
const MaxLineBytes = 16 << 20

// DialTimeout bounds one dial of the broker socket.
const DialTimeout = 5 * time.Second

// readBuffer is the size of each relay's read buffer: a line longer than
// it is gathered piece by piece, up to MaxLineBytes.
const readBuffer = 64 << 10

// dial connects to the broker socket.
func dial(ctx context.Context, socket string) (net.Conn, error) {
	d := net.Dialer{Timeout: DialTimeout}
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, checkfu.Refuse(CodeBrokerUnreachable, "door: the broker socket cannot be reached: %v", err)
	}
	return c, nil
}

// RelayMCP serves MCP over in and out (the door's standard input and
// output, where an agent started it as a stdio MCP server) by relaying
// each line to the broker socket at socket and each line the broker
// answers back to out. It returns when the broker closes the connection
// (after in ended, the relay half-closes the socket so the broker can
// finish), when ctx ends, or at the first line longer than MaxLineBytes
// in either direction ([CodeRelayLineTooLong]). A line is forwarded whole or
// not at all; input that ends inside a line forwards nothing of it.
func RelayMCP(ctx context.Context, in io.Reader, out io.Writer, socket string) error {
	conn, err := dial(ctx, socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	var (
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		conn.Close()
	}
	go func() {
		err := copyLines(conn, in, "the agent")
		var refused *checkfu.Refusal
		if errors.As(err, &refused) {
			fail(err)
			return
		}
		if err != nil { // the broker went away: the other side ends too
			conn.Close()
			return
		}
		// The agent's input ended: let the broker finish its answers.
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}()
	derr := copyLines(out, conn, "the broker")
	mu.Lock()
	defer mu.Unlock()
	if first != nil {
		return first
	}
	return derr
}

// copyLines copies whole lines from src to dst, each at most
// MaxLineBytes. It returns nil when src ends, whatever a partial last
// line held, and a [CodeRelayLineTooLong] refusal for a longer line, of which
// nothing was written. A long line is gathered piece by piece and given
// up as soon as what is gathered, its newline still to come, reaches the
// bound: memory stays within MaxLineBytes plus one read buffer.
func copyLines(dst io.Writer, src io.Reader, from string) error {
	br := bufio.NewReaderSize(src, readBuffer)
	var long []byte // the start of a line longer than the buffer
	for {
		piece, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			if len(long)+len(piece) > MaxLineBytes {
				return lineTooLong(from)
			}
			line := piece
			if long != nil {
				line, long = append(long, piece...), nil
			}
			if _, werr := dst.Write(line); werr != nil {
				return werr
			}
		case errors.Is(err, bufio.ErrBufferFull):
			if len(long)+len(piece) >= MaxLineBytes {
				return lineTooLong(from)
			}
			long = append(long, piece...)
		default:
			return nil // the end of src, or it failed: nothing partial is sent
		}
	}
}

func lineTooLong(from string) error {
	return checkfu.Refuse(CodeRelayLineTooLong, "door: %s sent a line longer than %d bytes; the relay ends", from, MaxLineBytes)
}
