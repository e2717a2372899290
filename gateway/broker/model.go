package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// The bounds of the model route on the socket.
const (
	// MaxModelConnections bounds the HTTP (model route) connections
	// served at once, apart from MaxConnections' MCP ones: an agent keeps
	// a few open through the door (a stream, a side call, idle keep-alive
	// connections). One more is closed unanswered.
	MaxModelConnections = 16
	// FirstByteTimeout bounds how long a new connection may stay silent
	// before its first byte tells MCP from HTTP (a silent one is
	// closed), and how long a model request's header block may take.
	// At most MaxPending connections wait for their first byte at once;
	// one more is closed unanswered.
	FirstByteTimeout = 10 * time.Second
	// MaxPending bounds the connections waiting for their first byte.
	MaxPending = MaxConnections + MaxModelConnections
	// MaxModelHeaderBytes bounds a model request's header block (Go's
	// server allows 4 KiB of slack over it); a longer one is answered
	// 431 and the connection closed.
	MaxModelHeaderBytes = 64 << 10
	// ModelIdleTimeout closes a model connection that has been idle
	// between requests this long.
	ModelIdleTimeout = 2 * time.Minute
	// MaxModelHeldBytes bounds the model request bodies the broker holds
	// at once over all its model connections, from their first byte
	// read to the end of their call (the pipeline holds the body while
	// the answer streams): two of the largest, modelroute.MaxRequestBytes.
	// A body that would take the total past it is refused with
	// CodeModelBytesExceeded.
	MaxModelHeldBytes = 2 * modelroute.MaxRequestBytes
)

// speaksHTTP reports whether a connection's first byte starts an HTTP
// request (its method, upper-case ASCII) rather than an MCP message,
// which starts with "{" or white space.
func speaksHTTP(first byte) bool { return first >= 'A' && first <= 'Z' }

// peeked is a connection whose first bytes were read into br.
type peeked struct {
	net.Conn
	br *bufio.Reader

	once   sync.Once
	closed chan struct{}
}

func (p *peeked) Read(b []byte) (int, error) { return p.br.Read(b) }

// Close closes the connection and tells whoever waits for its end.
func (p *peeked) Close() error {
	p.once.Do(func() { close(p.closed) })
	return p.Conn.Close()
}

// oneConn is a listener that yields one connection, then waits for it to
// close (or ctx to end) and reports itself closed, so an http.Server
// serves exactly that connection.
type oneConn struct {
	c    *peeked
	ctx  context.Context
	mu   sync.Mutex
	gave bool
}

func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	gave := l.gave
	l.gave = true
	l.mu.Unlock()
	if !gave {
		return l.c, nil
	}
	select {
	case <-l.c.closed:
	case <-l.ctx.Done():
	}
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.c.LocalAddr() }

// connKey is the context key of the connection a model request came on.
type connKey struct{}

// serveModel serves the model route over HTTP/1.1 on c until it closes or
// ctx ends.
func (b *Broker) serveModel(ctx context.Context, c *peeked) error {
	select {
	case b.models <- struct{}{}:
		defer func() { <-b.models }()
	default:
		c.Close()
		return errModelConnections
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(b.model),
		ReadHeaderTimeout: b.firstByte,
		MaxHeaderBytes:    MaxModelHeaderBytes,
		IdleTimeout:       b.idle,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ConnContext:       func(cctx context.Context, nc net.Conn) context.Context { return context.WithValue(cctx, connKey{}, nc) },
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	err := srv.Serve(&oneConn{c: c, ctx: ctx})
	c.Close()
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// modelCapability returns the capability of the channel's model route
// for a request to path: the model registration whose dialect serves it
// (its path, or Anthropic Messages' token count), else the first model
// registration (which refuses the path), else "".
func (b *Broker) modelCapability(path string) string {
	first := ""
	for _, pt := range b.ch.Tools() {
		reg, ok := b.ch.Registry().Lookup(pt.Capability)
		if !ok || reg.Protocol != authz.ModelAPI {
			continue
		}
		if reg.Model.Dialect.Serves(path) {
			return pt.Capability
		}
		if first == "" {
			first = pt.Capability
		}
	}
	return first
}

// answered notes whether the answer's status was written.
type answered struct {
	http.ResponseWriter
	wrote bool
}

func (a *answered) WriteHeader(status int) {
	a.wrote = true
	a.ResponseWriter.WriteHeader(status)
}

func (a *answered) Write(p []byte) (int, error) {
	a.wrote = true
	return a.ResponseWriter.Write(p)
}

func (a *answered) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// model answers one model request through the channel's pipeline. A
// refusal reaches the agent as an HTTP error whose body names its code
// alone; an answer cut short after its status was written ends the
// connection, so the agent sees a broken answer rather than a short one.
func (b *Broker) model(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := b.pace(ctx); err != nil {
		refuseHTTP(w, err)
		return
	}
	capability := b.modelCapability(r.URL.Path)
	if capability == "" {
		b.refuse(ctx, errModelUnregistered)
		refuseHTTP(w, errModelUnregistered)
		return
	}
	body, err := b.readBody(r.Body)
	defer b.held.Add(-int64(cap(body))) // what readBody reserved
	if _, refused := checkfu.CodeOf(err); refused {
		b.refuse(ctx, err)
		refuseHTTP(w, err)
		return
	}
	if err != nil {
		return // the agent's side went away
	}
	a := &answered{ResponseWriter: w}
	err = b.ch.Model(ctx, capability, pipeline.ModelCall{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header, Body: body}, a)
	if err == nil {
		return
	}
	if _, refused := checkfu.CodeOf(err); refused && !a.wrote {
		b.spent(ctx)
	}
	if !a.wrote {
		refuseHTTP(w, err)
		return
	}
	if nc, ok := ctx.Value(connKey{}).(net.Conn); ok {
		nc.Close()
	}
}

// readBody reads a model request's body, at most
// modelroute.MaxRequestBytes (a longer one is refused with
// modelroute.CodeModelRequestInvalid), into a slice whose capacity it
// has reserved in b.held, piece by piece as it grows, within
// MaxModelHeldBytes (else CodeModelBytesExceeded). The caller gives the
// capacity back when the call has ended, on error too: the slice's
// capacity is exactly what is reserved.
func (b *Broker) readBody(r io.Reader) ([]byte, error) {
	var body []byte
	for {
		if len(body) == cap(body) {
			if cap(body) == modelroute.MaxRequestBytes {
				var probe [1]byte
				n, err := io.ReadFull(r, probe[:])
				if n > 0 {
					return body, errModelBodyTooLong
				}
				if errors.Is(err, io.EOF) {
					return body, nil
				}
				return body, err
			}
			grow := min(max(cap(body), 64<<10), modelroute.MaxRequestBytes-cap(body))
			if b.held.Add(int64(grow)) > MaxModelHeldBytes {
				b.held.Add(-int64(grow))
				return body, errModelBytes
			}
			grown := make([]byte, len(body), cap(body)+grow) // exactly what is reserved
			copy(grown, body)
			body = grown
		}
		n, err := r.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if errors.Is(err, io.EOF) {
			return body, nil
		}
		if err != nil {
			return body, err
		}
	}
}

// refuseHTTP answers a refused or failed model request: the status says
// which kind, the body carries the code alone (as for a tool call, the
// pipeline's message is not the agent's to see), in a shape both
// Anthropic's and OpenAI's clients read.
func refuseHTTP(w http.ResponseWriter, err error) {
	status, text, code := http.StatusForbidden, "failed", ""
	if c, ok := checkfu.CodeOf(err); ok {
		code, text = string(c), "refused: "+string(c)
		switch c {
		case modelroute.CodeModelPathRefused:
			status = http.StatusNotFound
		case modelroute.CodeModelRequestInvalid:
			status = http.StatusBadRequest
		case CodeModelBytesExceeded:
			status = http.StatusServiceUnavailable
		}
	} else {
		status = http.StatusBadGateway
	}
	var ee *authz.EvidenceError
	if errors.As(err, &ee) {
		status, text, code = http.StatusBadGateway, "failed: evidence_unrecorded", ""
	}
	msg, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "checkfu_refusal", "code": code, "message": text}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(msg)
}

var (
	errModelConnections  = checkfu.Refuse(CodeConnectionsExceeded, "broker: more than %d model connections at once", MaxModelConnections)
	errPendingExceeded   = checkfu.Refuse(CodeConnectionsExceeded, "broker: more than %d connections waiting for their first byte", MaxPending)
	errModelUnregistered = checkfu.Refuse(CodeModelRouteUnregistered, "broker: the session has no model route")
	errModelBodyTooLong  = checkfu.Refuse(modelroute.CodeModelRequestInvalid, "broker: a model request's body is longer than %d bytes", modelroute.MaxRequestBytes)
	errModelBytes        = checkfu.Refuse(CodeModelBytesExceeded, "broker: the model request bodies held at once would pass %d bytes", MaxModelHeldBytes)
)
