package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/mcpremote"
	"github.com/checkfu/checkfu/internal/refusalbudget"
	"github.com/checkfu/checkfu/internal/telemetry"
)

// serverName is the name the broker gives itself in MCP's initialize.
const serverName = "checkfu-broker"

// A Broker is the MCP server capability-enabled sandbox code talks to. It
// serves one gateway channel: tools/list returns the canonical descriptor
// of each tool the channel's profile allows, and tools/call forwards the
// tool's capability and arguments, and nothing else, over the channel.
// A Broker holds no credential and dials nothing.
type Broker struct {
	ch     *gateway.Channel
	server *mcp.Server
	tools  []*mcp.Tool
	// conns and inflight are semaphores of MaxConnections and
	// MaxCallsInFlight slots: a connection served, a request handled.
	conns    chan struct{}
	inflight chan struct{}
	refusals *refusalbudget.Budget
	// pending and models are semaphores of connections waiting for
	// their first byte and of model route connections.
	pending chan struct{}
	models  chan struct{}
	// firstByte and idle are FirstByteTimeout and ModelIdleTimeout (a
	// test shortens them).
	firstByte, idle time.Duration
	// held is the bytes of model request bodies reserved at once
	// (MaxModelHeldBytes).
	held atomic.Int64
}

// New returns the broker for ch. Every tool the profile lists must be
// exactly a registration of the channel's gateway: the same capability,
// tool name, operation and resource; a tool advertising anything else (a
// remote MCP server's URL, say) is refused with
// [CodeDescriptorUnregistered] and no broker is built. A registration
// whose schema is not an object schema is refused with
// [CodeDescriptorInvalid], and two tools of one name with
// [CodeDescriptorDuplicated].
func New(ch *gateway.Channel) (*Broker, error) {
	if ch == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "broker: New needs a gateway channel")
	}
	b := &Broker{ch: ch, conns: make(chan struct{}, MaxConnections), inflight: make(chan struct{}, MaxCallsInFlight), refusals: refusalbudget.New(MaxRefusals, RefusalsPerSecond),
		pending: make(chan struct{}, MaxPending), models: make(chan struct{}, MaxModelConnections),
		firstByte: FirstByteTimeout, idle: ModelIdleTimeout, server: mcp.NewServer(&mcp.Implementation{Name: serverName, Version: "v1"}, &mcp.ServerOptions{
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		})}
	for _, pt := range ch.Tools() {
		reg, ok := ch.Registry().Lookup(pt.Capability)
		if !ok || reg.Tool.Name != pt.Tool || reg.Operation != pt.Operation || reg.Resource != pt.Resource {
			return nil, checkfu.Refuse(CodeDescriptorUnregistered, "broker: tool %s (%s %s) is not fixed by a registration", checkfu.Quote(pt.Tool), checkfu.Quote(pt.Operation), checkfu.Quote(pt.Resource))
		}
		if reg.Protocol == authz.ModelAPI {
			continue // the model route, served over HTTP: never an MCP tool
		}
		tool, err := descriptor(reg)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(b.tools, func(t *mcp.Tool) bool { return t.Name == tool.Name }) {
			return nil, checkfu.Refuse(CodeDescriptorDuplicated, "broker: tool %s is listed twice", checkfu.Quote(tool.Name))
		}
		b.tools = append(b.tools, tool)
		capability, remote := reg.Capability, reg.Protocol == authz.MCP
		b.server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return b.call(ctx, capability, remote, req.Params.Arguments), nil
		})
	}
	b.server.AddReceivingMiddleware(b.unlisted)
	return b, nil
}

// unlisted sends a tools/call of a tool the broker does not list to the
// gateway as a call of no capability, instead of letting the SDK answer
// "unknown tool" on its own: the gateway refuses it as it refuses a tool
// the profile hides ([authz.CodePermissionMissing], the same text) and
// records the denial, so a sandbox probing for tools leaves a trace and
// learns nothing a listed-but-unpermitted tool would not tell it. The
// name it asked for is not passed on.
func (b *Broker) unlisted(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || call.Params == nil || !slices.ContainsFunc(b.tools, func(t *mcp.Tool) bool { return t.Name == call.Params.Name }) {
			return b.call(ctx, "", false, nil), nil
		}
		return next(ctx, method, req)
	}
}

// descriptor turns a registration's canonical tool descriptor into an MCP
// tool. Nothing about the provider (operation, resource, credential) is
// in it.
func descriptor(reg authz.Registration) (*mcp.Tool, error) {
	var schema map[string]any
	if err := json.Unmarshal(reg.Tool.InputSchema, &schema); err != nil || schema["type"] != "object" {
		return nil, checkfu.Refuse(CodeDescriptorInvalid, "broker: tool %s needs an input schema of type object", checkfu.Quote(reg.Tool.Name))
	}
	return &mcp.Tool{Name: reg.Tool.Name, Description: reg.Tool.Description, InputSchema: json.RawMessage(reg.Tool.InputSchema)}, nil
}

// call forwards one tools/call. A refusal reaches sandbox code as its code
// alone ("refused: permission_missing"): the gateway's messages can name
// leases, resources and registrations, which are not the agent's to see.
// A remote MCP tool's answer is its result (content, structured content,
// error flag), which the edge has screened.
func (b *Broker) call(ctx context.Context, capability string, remote bool, args json.RawMessage) *mcp.CallToolResult {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	ctx, span := b.ch.Span(ctx, "checkfu.broker/tools.call")
	res, err := b.forward(ctx, capability, remote, args)
	code := ""
	if err != nil {
		code = errorCode(err)
	}
	telemetry.End(span, code)
	return res
}

// forward is call inside the broker's span: the answer, and the error
// it was made from, if any (for the span's code).
func (b *Broker) forward(ctx context.Context, capability string, remote bool, args json.RawMessage) (*mcp.CallToolResult, error) {
	if err := b.pace(ctx); err != nil {
		return errorResult(err), err
	}
	resp, err := b.ch.Call(ctx, capability, args)
	if err != nil {
		if _, refused := checkfu.CodeOf(err); refused {
			b.spent(ctx)
		}
		return errorResult(err), err
	}
	if remote {
		res, err := mcpremote.Result(resp)
		if err != nil {
			return errorResult(err), err
		}
		return res, nil
	}
	text := string(resp.Body)
	if !utf8.ValidString(text) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "failed: the provider's answer is not text"}}}, nil
	}
	return &mcp.CallToolResult{IsError: resp.Status >= 400, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
}

func errorResult(err error) *mcp.CallToolResult {
	text := "failed"
	if code, ok := checkfu.CodeOf(err); ok {
		text = "refused: " + string(code)
	} else if uc, ok := egress.UpstreamCodeOf(err); ok {
		text = "failed: " + string(uc)
	}
	var ee *authz.EvidenceError
	if errors.As(err, &ee) {
		text = "failed: evidence_unrecorded"
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// errorCode is the code errorResult answers err with.
func errorCode(err error) string {
	code := "failed"
	if c, ok := checkfu.CodeOf(err); ok {
		code = string(c)
	} else if uc, ok := egress.UpstreamCodeOf(err); ok {
		code = string(uc)
	}
	var ee *authz.EvidenceError
	if errors.As(err, &ee) {
		code = "evidence_unrecorded"
	}
	return code
}

// Tools returns the MCP descriptors tools/list serves.
func (b *Broker) Tools() []*mcp.Tool { return append([]*mcp.Tool(nil), b.tools...) }

// ServeConn serves conn until the peer closes it or ctx ends: the model
// route over HTTP/1.1 when its first byte starts an HTTP request (within
// MaxModelConnections; see the package documentation), else MCP
// (newline-delimited JSON-RPC), within the broker's bounds: lines of at
// most MaxLineBytes, MaxCallsInFlight requests handled at once. A
// connection past MaxConnections is closed at once and refused with
// [CodeConnectionsExceeded]. When the connection ends, its handlers'
// contexts are cancelled, and ServeConn waits for them at most
// CloseGrace.
func (b *Broker) ServeConn(ctx context.Context, nc net.Conn) error {
	c, err := b.awaitFirstByte(nc)
	if err != nil {
		return err
	}
	if first, _ := c.br.Peek(1); speaksHTTP(first[0]) {
		return b.serveModel(ctx, c)
	}
	return b.serveMCP(ctx, c)
}

// awaitFirstByte waits, within the bounds on pending connections, at most
// FirstByteTimeout for nc's first byte, which it leaves unread.
func (b *Broker) awaitFirstByte(nc net.Conn) (*peeked, error) {
	select {
	case b.pending <- struct{}{}:
		defer func() { <-b.pending }()
	default:
		nc.Close()
		return nil, errPendingExceeded
	}
	c := &peeked{Conn: nc, br: bufio.NewReaderSize(nc, readBufferSize), closed: make(chan struct{})}
	nc.SetReadDeadline(time.Now().Add(b.firstByte))
	_, err := c.br.Peek(1)
	nc.SetReadDeadline(time.Time{})
	if err != nil {
		nc.Close()
		if errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, net.ErrClosed) {
			return nil, io.EOF
		}
		return nil, err
	}
	return c, nil
}

// serveMCP speaks MCP over c, whose first byte is still unread.
func (b *Broker) serveMCP(ctx context.Context, nc *peeked) error {
	select {
	case b.conns <- struct{}{}:
		defer func() { <-b.conns }()
	default:
		nc.Close()
		return errConnections
	}
	if b.refusals.Exhausted() {
		nc.Close()
		return errRefusalsExceeded
	}
	life, end := context.WithCancel(ctx)
	defer end()
	c := newConn(b, nc, end)
	ss, err := b.server.Connect(life, c, nil)
	if err != nil {
		c.Close()
		return err
	}
	waited := make(chan error, 1)
	go func() { waited <- ss.Wait() }()
	select {
	case err := <-waited:
		return err
	case <-life.Done():
	case <-b.refusals.Done():
	}
	// The SDK's Close waits for the handlers before it closes the
	// connection. Closing it first ends the SDK's reader, which cancels
	// every handler in flight; one that ignores it does not hold
	// ServeConn past CloseGrace.
	go ss.Close()
	c.Close()
	select {
	case err := <-waited:
		return err
	case <-time.After(CloseGrace):
		return nil
	}
}

// Serve accepts connections on ln, each served by ServeConn, until ctx
// ends or ln fails; it closes ln and waits for its connections, each at
// most CloseGrace after its handlers were cancelled, before returning.
func (b *Broker) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Go(func() { _ = b.ServeConn(ctx, conn) })
	}
}

// refuse records err, a refusal the broker decided itself, over its
// channel, within the channel's refusal bounds: it waits for the rate,
// and records nothing once the budget is spent.
func (b *Broker) refuse(ctx context.Context, err error) {
	if b.pace(ctx) != nil {
		return
	}
	_ = b.ch.Refuse(context.WithoutCancel(ctx), err)
	b.spent(ctx)
}

// spent counts one refusal; the one that spends the budget is followed
// by one record of CodeRefusalsExceeded, and the channel closes: every
// connection ends, and nothing more is served or recorded.
func (b *Broker) spent(ctx context.Context) {
	if _, last := b.refusals.Spend(); last {
		_ = b.ch.Refuse(context.WithoutCancel(ctx), errRefusalsExceeded)
		b.ch.Close()
	}
}

// HTTPHandler serves the same MCP server over MCP's streamable HTTP
// transport, for a loopback listener (the TypeScript client and the
// conformance suite use it). The SDK's localhost protection stays on.
func (b *Broker) HTTPHandler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.server }, nil)
}

// ListenUnix listens on a Unix socket at path, for a directory only the
// plane serves and that is mounted into the sandbox. The socket is made
// connectable by any user (the workload runs as a non-root user of its
// own); who can reach it is decided by the directory, which the caller
// creates and mounts into exactly one sandbox.
func ListenUnix(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}
