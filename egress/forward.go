package egress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkfu/checkfu"
)

// This file is the guard's upstream half for absolute-form HTTP: a small
// HTTP/1.1 forwarder that writes the request and reads the response on the
// handler's own goroutine, over connections it keeps per destination. The
// workload-facing half stays net/http's server.

// hopHeaders are never forwarded, in either direction (RFC 9110 section
// 7.6.1, plus the Proxy-* family and Expect, since the forwarder sends the
// body without waiting for 100 Continue). Headers named in Connection are
// removed too.
var hopHeaders = [...]string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Expect",
}

// forwardingHeaders, and every X-Forwarded-* header, are dropped from
// requests: the guard reveals nothing about the workload's network, and
// passes on no claim about the client or the proxies before it, which an
// upstream that trusts the guard's address would read as the guard's own.
var forwardingHeaders = [...]string{
	"Forwarded", "Via", "X-Real-Ip", "X-Client-Ip", "True-Client-Ip", "Client-Ip", "X-Cluster-Client-Ip",
	"X-Originating-Ip", "X-Remote-Ip", "X-Remote-Addr", "X-Original-Forwarded-For",
}

// removeForwarding deletes the forwarding headers of h.
func removeForwarding(h http.Header) {
	for _, k := range forwardingHeaders {
		delete(h, k)
	}
	for k := range h {
		if strings.HasPrefix(k, "X-Forwarded-") {
			delete(h, k)
		}
	}
}

const (
	maxIdlePerDestination = 64
	// maxIdleTotal bounds the idle connections of all destinations
	// together: a workload that sprays destinations cannot make the
	// guard hold a descriptor for each.
	maxIdleTotal          = 256
	upstreamHeaderTimeout = 60 * time.Second
)

// An upstreamConn is one connection to a destination, with its buffers.
type upstreamConn struct {
	net.Conn
	br *bufio.Reader
	bw *bufio.Writer
	// expire makes every pending and future read or write on the
	// connection fail at once; made once per connection, it is what a
	// cancelled workload request runs.
	expire func()
	// lim is how many more bytes br may read from the connection: set
	// to maxResponseHeaderBytes while a response header is read, so a
	// destination cannot make the guard buffer an endless header, and to
	// noLimit for bodies. Used only by the handler that holds uc.
	lim int64
	// nread counts the bytes read from the connection, ever; forward
	// compares it around an exchange to tell whether anything was read.
	nread int64
	// expired is set by expire, before its deadline: armRead checks it
	// after moving the read deadline, so that a cancellation is never
	// undone.
	expired atomic.Bool
}

// armRead gives the next read on uc until d from now, unless expire has
// run.
func (uc *upstreamConn) armRead(d time.Duration) {
	uc.SetReadDeadline(time.Now().Add(d))
	if uc.expired.Load() {
		uc.SetDeadline(time.Unix(1, 0))
	}
}

// maxResponseHeaderBytes bounds the response headers (interim ones
// included) of one exchange, as http.Transport's default does for its
// own; noLimit lifts the bound for bodies, which are streamed.
const (
	maxResponseHeaderBytes = 1 << 20
	noLimit                = math.MaxInt64
)

// errHeaderTooLarge ends the reading of an oversized response header.
var errHeaderTooLarge = errors.New("upstream response header is larger than 1 MiB")

// limitedConn is the reader under an upstreamConn's br: it enforces lim.
type limitedConn struct{ uc *upstreamConn }

func (l limitedConn) Read(p []byte) (int, error) {
	if l.uc.lim <= 0 {
		return 0, errHeaderTooLarge
	}
	if int64(len(p)) > l.uc.lim {
		p = p[:l.uc.lim]
	}
	n, err := l.uc.Conn.Read(p)
	l.uc.lim -= int64(n)
	l.uc.nread += int64(n)
	return n, err
}

// newUpstreamConn wraps c, a connection the guarded dialer made.
func newUpstreamConn(c net.Conn) *upstreamConn {
	uc := &upstreamConn{Conn: c, bw: bufio.NewWriterSize(c, 4<<10), lim: noLimit}
	uc.br = bufio.NewReaderSize(limitedConn{uc}, 4<<10)
	uc.expire = func() { uc.expired.Store(true); c.SetDeadline(time.Unix(1, 0)) }
	return uc
}

// An upstreamPool keeps idle upstream connections per "host:port". Every
// connection in it was made by the guarded dialer, so its address was
// checked when it was dialled.
type upstreamPool struct {
	mu   sync.Mutex
	idle map[string][]*upstreamConn // guarded by mu; no empty lists
	n    int                        // guarded by mu; idle connections in all
	// maxIdle bounds n (at most maxIdleTotal; see descriptorCaps).
	maxIdle int
	closed  bool // guarded by mu
}

// get returns an idle connection to key that is still quiet, or nil. A
// connection on which the destination sent anything while it was idle
// (an unsolicited or extra response), or which it closed, is discarded:
// bytes no request asked for are never read as a response.
func (p *upstreamPool) get(key string) *upstreamConn {
	for {
		c := p.pop(key)
		if c == nil || c.quiet() {
			return c
		}
		c.Close()
	}
}

func (p *upstreamPool) pop(key string) *upstreamConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.idle[key]
	if len(list) == 0 {
		return nil
	}
	c := list[len(list)-1]
	if len(list) == 1 {
		delete(p.idle, key)
	} else {
		p.idle[key] = list[:len(list)-1]
	}
	p.n--
	return c
}

// quiet reports whether nothing has arrived on uc, not even an end of
// stream (see socketQuiet).
func (uc *upstreamConn) quiet() bool {
	return uc.br.Buffered() == 0 && socketQuiet(uc.Conn)
}

func (p *upstreamPool) put(key string, c *upstreamConn) {
	p.mu.Lock()
	if p.closed || p.n >= p.maxIdle || len(p.idle[key]) >= maxIdlePerDestination {
		p.mu.Unlock()
		c.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[string][]*upstreamConn{}
	}
	p.idle[key] = append(p.idle[key], c)
	p.n++
	p.mu.Unlock()
}

func (p *upstreamPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for k, list := range p.idle {
		for _, c := range list {
			c.Close()
		}
		delete(p.idle, k)
	}
	p.n = 0
}

// noUserAgent is the User-Agent value that makes Request.Write send none.
// It is shared and never modified.
var noUserAgent = []string{""}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// removeHop deletes the hop-by-hop headers of h, including those its
// Connection header names.
func removeHop(h http.Header) {
	for _, v := range h["Connection"] {
		for _, name := range strings.Split(v, ",") {
			if name = textproto.TrimString(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, k := range hopHeaders {
		delete(h, k)
	}
}

// forward sends r to authority ("host:port", canonical) with Host header
// host, and copies the response to w.
func (g *Guard) forward(w http.ResponseWriter, r *http.Request, authority, host string) {
	out := &http.Request{
		Method:        r.Method,
		URL:           &url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery},
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Host:          host,
		Header:        r.Header, // the handler owns r; its headers are edited in place
		ContentLength: r.ContentLength,
	}
	if out.URL.Path == "" {
		out.URL.Path = "/"
	}
	var body *workloadBody
	if r.ContentLength != 0 {
		body = &workloadBody{r: r.Body, rc: http.NewResponseController(w), idle: g.tunnelIdle}
		out.Body = body
	}
	removeHop(out.Header)
	removeForwarding(out.Header)
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = noUserAgent // send none rather than Go's default
	}

	// A pooled connection may have been closed by the destination while
	// idle; an idempotent request without a body is retried once on a
	// fresh connection, and only when nothing at all was read from the
	// reused one: a destination that answered, however badly, has seen
	// the request, and must not get it twice.
	for attempt := 0; ; attempt++ {
		uc, reused := g.pool.get(authority), true
		if uc == nil {
			c, err := g.dial(r.Context(), "tcp", authority)
			if err != nil {
				g.fail(w, r, err)
				return
			}
			uc, reused = newUpstreamConn(c), false
		}
		// A cancelled workload request unblocks any read or write on uc.
		stop := context.AfterFunc(r.Context(), uc.expire)
		before := uc.nread
		resp, err := g.roundTrip(uc, out)
		if err != nil {
			stop()
			uc.Close()
			if reused && uc.nread == before && attempt == 0 && out.Body == nil && idempotent(out.Method) && r.Context().Err() == nil {
				continue
			}
			if r.Context().Err() != nil {
				return
			}
			if body != nil && body.err != nil {
				// The workload's own body failed to read: its fault,
				// not the destination's.
				g.refuseStatus(w, r, checkfu.Refuse(CodeRequestInvalid, "egress: the request body is malformed: %v", body.err), http.StatusBadRequest)
				return
			}
			g.fail(w, r, &UpstreamError{Code: CodeUpstreamFailed, Target: authority, Err: err})
			return
		}
		g.copyResponse(w, r, uc, resp, authority, stop)
		return
	}
}

// A workloadBody is the workload's request body as sent upstream; it
// records the error of reading it (a malformed chunk, say), so that a
// failed exchange is told apart from a failed destination. Each read
// waits at most idle (the guard's TunnelIdleTimeout): a workload that
// stops sending its body does not hold the exchange for ever.
type workloadBody struct {
	r    io.ReadCloser
	rc   *http.ResponseController // sets the workload connection's read deadline
	idle time.Duration
	err  error // the first read error other than io.EOF
}

func (b *workloadBody) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(b.idle))
	n, err := b.r.Read(p)
	switch {
	case err == io.EOF:
		// The body has ended: net/http's own read, which watches
		// for the workload going away, must not inherit the deadline.
		b.rc.SetReadDeadline(time.Time{})
	case err != nil && b.err == nil:
		// The deadline stays: net/http's discarding of the rest of
		// the body fails at once, and the connection is closed.
		b.err = err
	}
	return n, err
}

func (b *workloadBody) Close() error { return b.r.Close() }

// idempotent reports whether a request with method may be sent twice.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return false
}

// roundTrip writes out on uc and reads the final response header.
func (g *Guard) roundTrip(uc *upstreamConn, out *http.Request) (*http.Response, error) {
	uc.SetDeadline(time.Now().Add(upstreamHeaderTimeout))
	if err := out.Write(uc.bw); err != nil {
		return nil, err
	}
	if err := uc.bw.Flush(); err != nil {
		return nil, err
	}
	uc.lim = maxResponseHeaderBytes
	defer func() { uc.lim = noLimit }()
	for {
		resp, err := http.ReadResponse(uc.br, out)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			if resp.StatusCode == http.StatusSwitchingProtocols {
				resp.Body.Close()
				return nil, errors.New("upstream switched protocols, which the guard does not forward")
			}
			uc.SetDeadline(time.Time{})
			return resp, nil
		}
		resp.Body.Close() // an interim 1xx response: read the next one
	}
}

// copyResponse sends resp to the workload and returns uc to the pool when
// the exchange left it reusable. stop unregisters the cancellation hook;
// it reports false when the hook already ran (uc is then unusable).
func (g *Guard) copyResponse(w http.ResponseWriter, r *http.Request, uc *upstreamConn, resp *http.Response, authority string, stop func() bool) {
	dst := w.Header()
	for k, vs := range resp.Header {
		dst[k] = vs
	}
	removeHop(dst)
	// Only the guard says that it refused or that the upstream failed: a
	// destination's own answer never carries those headers through.
	delete(dst, RefusalHeader)
	delete(dst, UpstreamFailureHeader)
	w.WriteHeader(resp.StatusCode)
	// Each read of the body and each write to the workload waits at
	// most TunnelIdleTimeout: neither a destination that stops sending
	// nor a workload that stops reading holds the exchange for ever.
	rc := http.NewResponseController(w)
	buf := copyBufs.Get().(*[]byte)
	err := g.copyBody(rc, w, uc, resp.Body, *buf, resp.ContentLength == -1)
	copyBufs.Put(buf)
	resp.Body.Close()
	// A connection holding bytes past the response is never pooled:
	// they are no answer to any later request.
	reusable := stop() && err == nil && !resp.Close && !r.Close && uc.br.Buffered() == 0
	if reusable {
		uc.SetReadDeadline(time.Time{})
		g.pool.put(authority, uc)
		return
	}
	uc.Close()
	if err != nil {
		panic(http.ErrAbortHandler) // the workload sees a cut connection, not a clean end
	}
}

// copyBody copies a response body to the workload. Each read of src
// waits at most TunnelIdleTimeout on uc, and each write to w as long;
// the last write's deadline stays for net/http's final flush, after
// which net/http clears it. With flush, it
// flushes after each read, so that a streamed response of unknown
// length reaches the workload as it arrives.
func (g *Guard) copyBody(rc *http.ResponseController, w io.Writer, uc *upstreamConn, src io.Reader, buf []byte, flush bool) error {
	for {
		uc.armRead(g.tunnelIdle)
		n, err := src.Read(buf)
		if n > 0 {
			rc.SetWriteDeadline(time.Now().Add(g.tunnelIdle))
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if flush {
				rc.Flush() //nolint:errcheck // a failed flush shows up as a failed write
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
