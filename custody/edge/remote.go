package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/internal/outbound"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// remoteHeaders is the table [RemoteHeaders] returns a copy of. It is
// not exported, so no importer can widen it while the edge reads it.
var remoteHeaders = [...]string{"Accept", "Content-Type", "Mcp-Method", "Mcp-Name", "Mcp-Protocol-Version", "Mcp-Session-Id"}

// RemoteHeaders returns the request headers, in canonical form and
// sorted, that a remote MCP session may send: what MCP's streamable HTTP
// transport needs for one call, and nothing else (no Last-Event-Id: the
// gateway's client never resumes a stream). Mcp-Method and Mcp-Name (the
// standard headers of protocol 2026-07-28) must repeat the message's
// method and, for the tools/call, the registered tool's name. The
// Connection's egress rules must allow them all. Each call returns a new
// slice: changing it changes nothing the edge allows.
func RemoteHeaders() []string { return slices.Clone(remoteHeaders[:]) }

// remoteHeader reports whether a canonical header name is in RemoteHeaders.
func remoteHeader(name string) bool {
	for _, h := range remoteHeaders {
		if h == name {
			return true
		}
	}
	return false
}

// remoteMethod reports whether m is an HTTP method of one call over MCP's
// streamable HTTP transport: POST for each message, DELETE to end the
// session. GET opens a standalone stream or resumes one, neither of which
// the gateway's client does: a GET would be an exchange the call does
// not need, with the credential on it.
func remoteMethod(m string) bool { return m == "POST" || m == "DELETE" }

// remoteMessages are the JSON-RPC methods the gateway's MCP client may
// send: the handshake (server/discover, of protocol 2026-07-28, or
// initialize and initialized), keep-alive, cancellation, and the one
// tools/call.
var remoteMessages = map[string]bool{"server/discover": true, "initialize": true, "notifications/initialized": true, "ping": true, "notifications/cancelled": true, "tools/call": true}

const (
	// maxRemoteExchanges bounds the HTTP exchanges of one remote call:
	// initialize, initialized, tools/call and the closing DELETE need
	// four; the rest is room for pings and answers to the server's
	// requests.
	maxRemoteExchanges = 12
	// maxRemoteRequestBytes bounds one request body of a remote call.
	maxRemoteRequestBytes = 1 << 20
	// maxRemoteDepth bounds the nesting of one JSON-RPC message: the
	// arguments' own bound (authz.MaxArgumentDepth) plus the envelope.
	maxRemoteDepth = authz.MaxArgumentDepth + 8
)

// A RemoteTransport is the http.RoundTripper of one remote MCP tool call:
// an MCP client (the gateway's) sends through it, and it lets through
// only what that one authorized call needs. For every exchange, and with
// nothing skipped, it
//
//   - refuses ([CodeRemoteRequestRefused], nothing sent) any URL but the
//     registered endpoint byte for byte, any method but POST and DELETE, any header outside [RemoteHeaders], a body that is not one
//     JSON-RPC message, a message other than the handshake, ping,
//     cancellation, a response, or the tools/call of exactly the
//     registered tool with exactly the authorized arguments (once: a
//     second is refused), and more than a call's share of exchanges;
//   - lets the Connection's egress rules decide the request it built
//     itself (never the client's) before the credential is opened, then
//     sends it through the Connection's egress client (no proxy, public
//     addresses only, no redirects), the credential opened and attached
//     here, at the edge, once the lease is seen to hold;
//   - reads at most [MaxResponseBytes] of the answer and screens it for
//     the credential (headers and body) and for content codings, exactly
//     as [Edge.Send] does, before the client sees a byte.
//
// It is made by [Edge.Remote] and is good for one call: [RemoteTransport.Finish]
// ends it. It is safe for concurrent use.
type RemoteTransport struct {
	// send and record are the Edge's, bound to this call: the transport
	// holds no *Edge, so nothing reachable from it can open a credential
	// for a caller (custody's exposure test checks it).
	send   func(req *http.Request, status *int) (*Response, error)
	record func(ctx context.Context, ev *authz.Evidence, err error) error
	call   *outbound.Call
	tool   string
	ev     authz.Evidence

	mu        sync.Mutex
	exchanges int   // guarded by mu: exchanges attempted
	first     error // guarded by mu: the first exchange that failed
	finished  bool  // guarded by mu: Finish was called
	called    bool  // guarded by mu: the tools/call was let through
	answered  bool  // guarded by mu: ev.Status is the tools/call's
}

var _ http.RoundTripper = (*RemoteTransport)(nil)

// Remote returns the transport of one authorized call of a remote MCP
// tool (a registration whose Protocol is [authz.MCP]). As for
// [Edge.Send], a value the pipeline did not make, or one already used, is
// refused with [CodeNotAuthorized], and a plain registration with
// [authz.CodeCapabilityMismatch] (it goes through Send). The
// Connection's egress rules decide every exchange: an endpoint they do
// not allow, or an MCP header they do not list, is refused with their
// code before any contact and before the credential is opened. A refusal
// is recorded as the call's edge_call Evidence when the Edge has a sink.
func (e *Edge) Remote(ctx context.Context, a Authorized) (*RemoteTransport, error) {
	if e == nil || e.leases == nil {
		return nil, errZeroEdge
	}
	c, ok := outbound.Take(a)
	if !ok {
		c = &outbound.Call{}
	}
	t := &RemoteTransport{call: c, tool: c.Tool, ev: e.edgeCall(ctx, c)}
	t.record = func(ctx context.Context, ev *authz.Evidence, err error) error {
		_, err = e.record(ctx, ev, nil, err)
		return err
	}
	if !ok {
		return nil, t.record(ctx, &t.ev, errNotAuthorized)
	}
	if c.Protocol != authz.MCP {
		return nil, t.record(ctx, &t.ev, checkfu.Refuse(authz.CodeCapabilityMismatch, "edge: capability %s is not a remote MCP tool; it is sent through Edge.Send", checkfu.Quote(c.Action.Capability)))
	}
	client, err := e.client(c.Rules)
	if err != nil {
		return nil, t.record(ctx, &t.ev, err)
	}
	cred, rules, lease, scope := c.Credential, c.Rules, c.Lease.ID, c.Scope
	t.send = func(req *http.Request, status *int) (*Response, error) {
		// The rules decide before the credential is opened: a refused
		// exchange never touches it.
		a, err := rules.Allow(req)
		if err != nil {
			return nil, err
		}
		return e.send(req.Context(), client, rules, req, &a, cred, lease, scope, status)
	}
	return t, nil
}

// Endpoint returns the registered endpoint of the remote MCP server the
// transport reaches ("" for a transport [Edge.Remote] did not make).
func (t *RemoteTransport) Endpoint() string {
	if t == nil || t.call == nil {
		return ""
	}
	return t.call.Action.Resource
}

// Tool returns the registered name of the tool the transport's one
// tools/call calls ("" for a transport [Edge.Remote] did not make).
func (t *RemoteTransport) Tool() string {
	if t == nil {
		return ""
	}
	return t.tool
}

// Arguments returns a copy of the canonical arguments of the transport's
// one tools/call (nil for a transport [Edge.Remote] did not make).
func (t *RemoteTransport) Arguments() []byte {
	if t == nil || t.call == nil {
		return nil
	}
	return append([]byte(nil), t.call.Action.Body...)
}

// RoundTrip makes one exchange of the remote call, as the type
// documentation says. The error is a [*checkfu.Refusal] for every policy
// "no" and an [*egress.UpstreamError] for a failed exchange; neither
// holds the credential.
func (t *RemoteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t == nil {
		if req != nil && req.Body != nil {
			req.Body.Close()
		}
		return nil, refuseRemote("edge: a nil RemoteTransport sends nothing")
	}
	resp, err := t.roundTrip(req)
	if err != nil {
		t.mu.Lock()
		if t.first == nil {
			t.first = err
		}
		t.mu.Unlock()
		return nil, err
	}
	return resp, nil
}

func (t *RemoteTransport) roundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	t.mu.Lock()
	t.exchanges++
	over, done := t.exchanges > maxRemoteExchanges, t.finished
	t.mu.Unlock()
	if done || over || t.send == nil {
		return nil, refuseRemote("edge: the remote call of %s is over (or has used its %d exchanges)", checkfu.Quote(t.tool), maxRemoteExchanges)
	}
	out, method, err := t.build(req)
	if err != nil {
		return nil, err
	}
	var status int
	r, err := t.send(out, &status)
	if status != 0 {
		// The evidence carries the status of the answer that decided
		// the call: the tools/call's once it has one, before that the
		// latest exchange's (the handshake step that failed), and an
		// answer that was refused in any case.
		t.mu.Lock()
		if !t.answered || method == "tools/call" || err != nil {
			t.ev.Status = status
		}
		t.answered = t.answered || method == "tools/call"
		t.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status)), StatusCode: r.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: r.Header, Body: io.NopCloser(bytes.NewReader(r.Body)), ContentLength: int64(len(r.Body)),
		Request: req,
	}, nil
}

// build checks the client's request and builds the one the edge sends:
// the registered endpoint, the client's method, only the MCP headers, and
// the checked body.
func (t *RemoteTransport) build(req *http.Request) (*http.Request, string, error) {
	a := t.call.Action
	if req.URL == nil || req.URL.String() != a.Resource {
		return nil, "", refuseRemote("edge: the remote call of %s went to a URL other than its registered endpoint", checkfu.Quote(t.tool))
	}
	if !remoteMethod(req.Method) {
		return nil, "", refuseRemote("edge: the remote call of %s used method %s (want POST or DELETE)", checkfu.Quote(t.tool), checkfu.Quote(req.Method))
	}
	h := http.Header{}
	for k, vs := range req.Header {
		if !remoteHeader(k) {
			return nil, "", refuseRemote("edge: the remote call of %s carries header %s, which is not an MCP header", checkfu.Quote(t.tool), checkfu.Quote(k))
		}
		h[k] = append([]string(nil), vs...)
	}
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(io.LimitReader(req.Body, maxRemoteRequestBytes+1)); err != nil {
			return nil, "", refuseRemote("edge: the remote call of %s: its request body cannot be read", checkfu.Quote(t.tool))
		}
	}
	if req.Method != http.MethodPost && len(body) > 0 {
		return nil, "", refuseRemote("edge: the remote call of %s sent a body with %s", checkfu.Quote(t.tool), req.Method)
	}
	method := ""
	if req.Method == http.MethodPost {
		var err error
		if method, err = t.message(body); err != nil {
			return nil, "", err
		}
	}
	if err := t.standardHeaders(h, method); err != nil {
		return nil, "", err
	}
	var rd io.Reader
	if req.Method == http.MethodPost {
		rd = bytes.NewReader(body)
	}
	out, err := http.NewRequestWithContext(req.Context(), req.Method, a.Resource, rd)
	if err != nil {
		return nil, "", refuseRemote("edge: the remote call of %s: the registered endpoint does not form a request", checkfu.Quote(t.tool))
	}
	out.Header = h
	return out, method, nil
}

// message checks that body is one JSON-RPC message the call may send: a
// response, a handshake, ping or cancellation message, or the tools/call
// of the registered tool with the authorized arguments.
func (t *RemoteTransport) message(body []byte) (string, error) {
	if len(body) > maxRemoteRequestBytes {
		return "", refuseRemote("edge: the remote call of %s sent more than %d bytes", checkfu.Quote(t.tool), maxRemoteRequestBytes)
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
		Method  *string         `json:"method"`
		Params  struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	// Strictly (no duplicate members, valid UTF-8, bounded depth, and no
	// member that differs from a declared one only in case, which
	// encoding/json would read as that member and an exact reader would
	// not): the edge and the remote server must read the same message.
	// Other members are the protocol's to add.
	if err := strictjson.Unmarshal(body, &msg, strictjson.Options{MaxDepth: maxRemoteDepth, MaxBytes: maxRemoteRequestBytes, AllowUnknownMembers: true}); err != nil {
		return "", refuseRemote("edge: the remote call of %s sent something other than one strict JSON-RPC message", checkfu.Quote(t.tool))
	}
	if msg.JSONRPC != "2.0" {
		return "", refuseRemote("edge: the remote call of %s sent a message that is not JSON-RPC 2.0", checkfu.Quote(t.tool))
	}
	if msg.Method == nil {
		// A response to the server's request, the client's own answer:
		// an id, and exactly one of a result and an error.
		if len(msg.ID) == 0 || string(msg.ID) == "null" || (msg.Result == nil) == (msg.Error == nil) {
			return "", refuseRemote("edge: the remote call of %s sent a message that is neither a request nor a response", checkfu.Quote(t.tool))
		}
		return "", nil
	}
	m := *msg.Method
	if !remoteMessages[m] {
		return "", refuseRemote("edge: the remote call of %s sent %s, which is not a message of one tool call", checkfu.Quote(t.tool), checkfu.Quote(m))
	}
	if m != "tools/call" {
		return m, nil
	}
	var args bytes.Buffer
	if msg.Params.Name != t.tool || json.Compact(&args, msg.Params.Arguments) != nil || !bytes.Equal(args.Bytes(), t.call.Action.Body) {
		return "", refuseRemote("edge: the remote call of %s is not the authorized call of that tool with its arguments", checkfu.Quote(t.tool))
	}
	// Once: the lease use and the approval behind the transport stand
	// for one effect.
	t.mu.Lock()
	again := t.called
	t.called = true
	t.mu.Unlock()
	if again {
		return "", refuseRemote("edge: the remote call of %s has sent its tools/call already", checkfu.Quote(t.tool))
	}
	return m, nil
}

// standardHeaders checks that Mcp-Method and Mcp-Name, when sent, say
// what the message is: its method, and for the tools/call the registered
// tool. A request without a message (GET, DELETE, a response) carries
// neither.
func (t *RemoteTransport) standardHeaders(h http.Header, method string) error {
	if v, ok := h["Mcp-Method"]; ok && (len(v) != 1 || v[0] != method || method == "") {
		return refuseRemote("edge: the remote call of %s: its Mcp-Method header does not name its message", checkfu.Quote(t.tool))
	}
	if v, ok := h["Mcp-Name"]; ok && (len(v) != 1 || v[0] != t.tool || method != "tools/call") {
		return refuseRemote("edge: the remote call of %s: its Mcp-Name header does not name the registered tool", checkfu.Quote(t.tool))
	}
	return nil
}

// Finish ends the transport: every later exchange is refused. err is the
// MCP client's outcome of the call; Finish returns what the caller should
// report: the first exchange the transport refused or that failed, when
// there was one (the MCP client may have wrapped it out of reach), else
// err. It records the call's one edge_call Evidence when the Edge has a
// sink; if that fails, the returned error includes an
// [*authz.EvidenceError] and the caller must withhold the answer.
func (t *RemoteTransport) Finish(ctx context.Context, err error) error {
	if t == nil || t.record == nil {
		return errZeroEdge
	}
	t.mu.Lock()
	t.finished = true
	if t.first != nil {
		err = t.first
	}
	ev := t.ev
	t.mu.Unlock()
	return t.record(ctx, &ev, err)
}

func refuseRemote(format string, args ...any) error {
	return checkfu.Refuse(CodeRemoteRequestRefused, format, args...)
}

// errRemoteProtocol refuses a remote registration on the plain path.
func errRemoteProtocol(capability string) error {
	return checkfu.Refuse(authz.CodeCapabilityMismatch, "edge: capability %s is a remote MCP tool; the pipeline calls it through Edge.Remote", checkfu.Quote(capability))
}
