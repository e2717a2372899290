package broker

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu"
)

// The bounds a broker holds its sandbox to. A broker serves one channel,
// so each is a bound per channel, over all its connections. They apply
// to [Broker.Serve] and [Broker.ServeConn], the sandbox's socket; the
// loopback [Broker.HTTPHandler] is the SDK's own.
const (
	// MaxLineBytes bounds one inbound MCP message, a line without its
	// newline. A longer line ends its connection as soon as its bytes
	// pass the bound, never buffered further, and is recorded as a
	// refusal with [CodeFrameTooLong].
	MaxLineBytes = 1 << 20
	// MaxConnections bounds the connections served at once. One more is
	// closed unanswered.
	MaxConnections = 4
	// MaxCallsInFlight bounds the requests (tools/call and every other
	// JSON-RPC request) being handled at once. A connection's next
	// request past it waits, unread, until one is answered: its bytes
	// stay in the socket and the sandbox's writes block, so a pipeline
	// of calls is a queue the kernel bounds, never a burst at the
	// upstream.
	MaxCallsInFlight = 4
	// MaxHeldBytes is the most the broker holds of its sandbox's input
	// as raw lines: one line being read per connection and one per
	// request in flight.
	MaxHeldBytes = (MaxConnections + MaxCallsInFlight) * MaxLineBytes
	// CloseGrace bounds how long Serve and ServeConn wait for their
	// handlers once they have cancelled them, when their context ends or
	// the peer goes away. A handler that ignores its cancellation is
	// left behind; its answer goes nowhere.
	CloseGrace = 2 * time.Second
)

// readBufferSize is the size of a connection's bufio buffer.
const readBufferSize = 64 << 10

// lineReader splits a connection's input into lines of at most
// MaxLineBytes. It holds at most MaxLineBytes of a line plus its read
// buffer: the line buffer's capacity never exceeds the bound.
type lineReader struct {
	br  *bufio.Reader
	buf []byte
}

// next returns the next non-empty line without its line ending, valid
// until the next call. A line over MaxLineBytes is [CodeFrameTooLong]
// and ends the input; so does input that ends inside a line.
func (r *lineReader) next() ([]byte, error) {
	for {
		r.buf = r.buf[:0]
		for {
			frag, err := r.br.ReadSlice('\n')
			if err == nil {
				frag = frag[:len(frag)-1]
			}
			if len(r.buf)+len(frag) > MaxLineBytes {
				return nil, checkfu.Refuse(CodeFrameTooLong, "broker: an input line of more than %d bytes", MaxLineBytes)
			}
			if err == nil {
				if len(r.buf) == 0 {
					r.buf = frag
				} else {
					r.buf = append(r.buf, frag...)
				}
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				if err == io.EOF && len(r.buf)+len(frag) > 0 {
					err = io.ErrUnexpectedEOF
				}
				return nil, err
			}
			if len(r.buf) == 0 || cap(r.buf) < len(r.buf)+len(frag) {
				nb := make([]byte, len(r.buf), min(max(2*cap(r.buf), len(r.buf)+len(frag), 4096), MaxLineBytes))
				copy(nb, r.buf)
				r.buf = nb
			}
			r.buf = append(r.buf, frag...)
		}
		line := r.buf
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) > 0 {
			return line, nil
		}
	}
}

// conn is one sandbox connection as the MCP SDK sees it: a transport and
// its connection in one. It bounds the lines it reads, holds a slot of
// the broker's MaxCallsInFlight for each request until its answer is
// written, and records every tools/call the SDK answers without the
// broker's handler.
type conn struct {
	b     *Broker
	nc    net.Conn
	lr    lineReader
	ended context.CancelFunc // cancels the handlers' context
	quit  chan struct{}      // closed by Close
	wmu   sync.Mutex         // serializes writes to nc

	mu     sync.Mutex // guards the fields below
	held   map[jsonrpc.ID]int
	calls  map[jsonrpc.ID]int // the held requests that are tools/call
	closed bool
}

func newConn(b *Broker, nc *peeked, ended context.CancelFunc) *conn {
	return &conn{b: b, nc: nc, lr: lineReader{br: nc.br}, ended: ended, quit: make(chan struct{}),
		held: map[jsonrpc.ID]int{}, calls: map[jsonrpc.ID]int{}}
}

// Connect makes c its own mcp.Transport.
func (c *conn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

// SessionID is empty, as for every stream transport.
func (c *conn) SessionID() string { return "" }

// Read returns the next message. A tools/call sent as a notification
// is recorded and never passed on (the SDK would drop it unanswered).
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		line, err := c.lr.next()
		if err != nil {
			if _, ok := checkfu.CodeOf(err); ok {
				c.b.refuse(ctx, err)
			}
			c.ended()
			return nil, err
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			c.ended()
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		if !req.IsCall() {
			if req.Method == methodCall {
				c.b.refuse(ctx, errCallMalformed)
				continue
			}
			return msg, nil
		}
		if err := c.hold(ctx, req); err != nil {
			return nil, err
		}
		return req, nil
	}
}

// methodCall is MCP's tools/call.
const methodCall = "tools/call"

var errCallMalformed = checkfu.Refuse(CodeCallMalformed, "broker: a tools/call the MCP session could not take")

// hold takes a slot of the broker's calls in flight for req, waiting
// while there is none.
func (c *conn) hold(ctx context.Context, req *jsonrpc.Request) error {
	select {
	case c.b.inflight <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.quit:
		return io.EOF
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		<-c.b.inflight
		return io.EOF
	}
	c.held[req.ID]++
	if req.Method == methodCall {
		c.calls[req.ID]++
	}
	return nil
}

// release gives back the slot of the request resp answers, and reports
// whether that request was a tools/call.
func (c *conn) release(resp *jsonrpc.Response) (call bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[resp.ID] == 0 {
		return false
	}
	if c.held[resp.ID]--; c.held[resp.ID] == 0 {
		delete(c.held, resp.ID)
	}
	if c.calls[resp.ID] > 0 {
		call = true
		if c.calls[resp.ID]--; c.calls[resp.ID] == 0 {
			delete(c.calls, resp.ID)
		}
	}
	<-c.b.inflight
	return call
}

// Write writes msg as one line. The broker's handler answers every
// tools/call with a result, so a tools/call answered with a JSON-RPC
// error was answered by the SDK alone (sent before initialize, say, or
// with a name that is not a string): it is recorded as a refusal with
// [CodeCallMalformed].
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if c.release(resp) && resp.Error != nil {
			c.b.refuse(ctx, errCallMalformed)
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.nc.Write(append(data, '\n'))
	return err
}

// Close closes the connection, cancels its handlers and gives back every
// slot it holds. It is idempotent.
func (c *conn) Close() error {
	c.ended()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	close(c.quit)
	for _, n := range c.held {
		for range n {
			<-c.b.inflight
		}
	}
	c.held, c.calls = nil, nil
	return c.nc.Close()
}

// errConnections refuses a connection past MaxConnections.
var errConnections = checkfu.Refuse(CodeConnectionsExceeded, "broker: more than %d connections at once", MaxConnections)
