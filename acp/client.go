package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/checkfu/checkfu"
)

// Config configures a [Client]. The zero Config is usable: default line
// bound, default session limits, updates ignored, every permission request
// denied.
type Config struct {
	// MaxLineBytes bounds every line read from and written to the agent;
	// zero means DefaultMaxLineBytes.
	MaxLineBytes int
	// Limits bound the session/new fields; the zero value is the defaults.
	Limits SessionLimits
	// ClientInfo is sent in initialize when set.
	ClientInfo *Implementation
	// OnUpdate receives every session/update notification, in arrival
	// order, on the client's read goroutine, with nothing queued in
	// between: a slow OnUpdate slows reading (back-pressure reaches the
	// agent), it never drops or reorders an update. It must return quickly
	// and must not call a Client method that waits for an answer (that
	// would deadlock the read goroutine). Nil ignores updates.
	OnUpdate func(SessionNotification)
	// OnPermission answers a session/request_permission. It runs on its own
	// goroutine, so it may block (waiting for a user). ctx is cancelled by
	// Cancel for the request's session and by the end of the client; the
	// answer is then "cancelled" whatever OnPermission returns, and
	// OnPermission should return promptly (its goroutine lives until it
	// does). Once OnPermission has committed its answer
	// ([CommitPermission]), Cancel leaves ctx be and the answer stands.
	// The client denies a request itself, as a nil OnPermission
	// does, without asking OnPermission, when it names a session that
	// NewSession did not create on this client (so any request before
	// initialize is answered), or when 64 requests, or requests holding
	// MaxPendingPermissionBytes between them, are already with
	// OnPermission: an agent flooding requests cannot hold a goroutine, a
	// prompt and its bytes for each. A request offering more than 64
	// options is answered "cancelled" without its options being decoded
	// (each would hold 48 bytes for 3 on the line). Nil denies every
	// request: it selects the first reject_once or reject_always option,
	// or answers "cancelled" when there is none.
	OnPermission func(ctx context.Context, req RequestPermissionRequest) PermissionOutcome
	// MaxPendingPermissionBytes bounds the bytes held by the permission
	// requests with OnPermission at once, each counted as the bytes of its
	// strings and of ToolCall.Raw plus 48 per option (what decoding it
	// holds); zero means DefaultMaxPendingPermissionBytes. A request that
	// would take the sum over the bound is denied without asking
	// OnPermission, so one request larger than the bound is always denied.
	MaxPendingPermissionBytes int
	// OnRefusal is told of every session/request_permission the client
	// answers itself, without OnPermission, by a *checkfu.Refusal with
	// its code: [CodePermissionSessionUnknown], [CodePermissionsPending],
	// [CodePermissionOptionsTooMany], or [CodeMessageInvalid] for
	// params that do not decode. The error quotes nothing the agent
	// sent. It is called before the answer is written, on the client's
	// read goroutine, as OnUpdate is: a
	// slow OnRefusal slows reading (back-pressure reaches the agent),
	// and it must not call a Client method that waits for an answer.
	// Nil ignores them.
	OnRefusal func(err error)
}

// DefaultMaxPendingPermissionBytes is the bound on the bytes held by
// pending permission requests when Config leaves it zero: 16 MiB, one
// default line. Without it, 64 requests each near the line bound held
// about 2 GiB while a user was asked.
const DefaultMaxPendingPermissionBytes = 16 << 20

// initState is the progress of initialize.
type initState int32

const (
	initNone initState = iota
	initInFlight
	initDone
	initFailed
)

// A Client is the client side of ACP over one agent connection: an
// io.Reader carrying the agent's stdout and an io.Writer feeding its stdin
// (a local process's pipes, `checkfu process attach`'s stdin and stdout, or
// the acp/wire API). It is safe for concurrent use.
//
// The Client never pipelines: session/new and session/prompt wait until
// initialize has been answered successfully, and are refused with
// [CodeClientNotInitialized] when it was not called or failed. Responses may
// arrive in any order; the agent's own request ids may equal the client's
// (a message with a method is never matched against a pending call).
//
// Any line over the bound, any malformed message and any read error ends
// the Client: every pending and later call fails with [CodeClientClosed]
// wrapping the cause, available from Err. A response to a call whose
// context was cancelled is dropped. A call's context that ends before
// its request line is fully written also ends the Client, since the
// agent's input would hold a partial line.
type Client struct {
	cfg    Config
	r      *Reader
	w      *Writer
	closer io.Closer // w, when it is one
	nextID atomic.Int64

	initMu    sync.Mutex // guards init and initErr
	init      initState
	initErr   error
	initReady chan struct{} // closed when init leaves initInFlight

	mu        sync.Mutex // guards pending, sessions, perms, nperms, permBytes, err
	pending   map[ID]pendingCall
	sessions  map[string]struct{}               // ids of the sessions session/new created
	perms     map[string]map[*permCall]struct{} // by session id
	nperms    int                               // permission requests being answered
	permBytes int                               // their heldBytes, summed
	err       error                             // set once: why the client ended
	done      chan struct{}                     // closed when err is set
}

// pendingCall is one call waiting for its response.
type pendingCall struct {
	method string
	ch     chan Message // buffered: the response is sent without blocking
}

// permCall is one session/request_permission being answered: ctx is
// the context OnPermission was given (before the value that names the
// call), cancel ends it, and committed, guarded by the client's mu, says
// that OnPermission committed its answer (CommitPermission) while ctx
// was live, so that Cancel leaves ctx be and the answer stands.
type permCall struct {
	c         *Client
	ctx       context.Context
	cancel    context.CancelFunc
	committed bool
}

// permKey is the key of the *permCall in the context OnPermission is
// given.
type permKey struct{}

// CommitPermission commits the answer of the permission request whose
// Config.OnPermission was given ctx (or a context derived from it) to be
// what OnPermission returns, and reports whether it did. From then on,
// Cancel neither cancels ctx nor answers the request "cancelled": the
// agent is given OnPermission's answer, after the session/cancel
// notification if Cancel came in between. It reports false, changing
// nothing, when the request was cancelled already (the answer will be
// "cancelled"), and for a context the client did not give OnPermission.
//
// An OnPermission that records its answer where it outlives the request
// (a host that books an approval for the agent to spend) commits first
// and records only when CommitPermission reports true: otherwise a
// Cancel landing between the record and the answer would leave the
// record saying yes for a request the agent was told was cancelled. The
// client's end still cancels ctx, so that the handler stops waiting; a
// committed answer is still the one written, when the agent's input
// still takes it.
func CommitPermission(ctx context.Context) bool {
	p, ok := ctx.Value(permKey{}).(*permCall)
	if !ok {
		return false
	}
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	if p.ctx.Err() != nil {
		return false
	}
	p.committed = true
	return true
}

// NewClient returns a Client speaking to the agent whose output is r and
// whose input is w, and starts reading r. Call Initialize next.
func NewClient(r io.Reader, w io.Writer, cfg Config) *Client {
	c := &Client{
		cfg:       cfg,
		r:         NewReader(r, cfg.MaxLineBytes),
		w:         NewWriter(w, cfg.MaxLineBytes),
		initReady: make(chan struct{}),
		pending:   map[ID]pendingCall{},
		sessions:  map[string]struct{}{},
		perms:     map[string]map[*permCall]struct{}{},
		done:      make(chan struct{}),
	}
	if cl, ok := w.(io.Closer); ok {
		c.closer = cl
	}
	go c.readLoop()
	return c
}

// errZeroClient is what every method of a Client not built by NewClient
// returns: it is connected to no agent.
var errZeroClient = checkfu.Refuse(CodeClientClosed, "acp: the zero Client is connected to no agent; build one with NewClient")

// closedChan is Done's answer for the zero Client, which has ended before
// it began.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns a channel closed when the client has ended (Close, the end
// of the agent's output, or a protocol error). It is closed from the
// start for the zero Client.
func (c *Client) Done() <-chan struct{} {
	if c.w == nil {
		return closedChan
	}
	return c.done
}

// Err returns why the client ended, or nil while it runs. The end of the
// agent's output is io.EOF. The zero Client reports [CodeClientClosed].
func (c *Client) Err() error {
	if c.w == nil {
		return errZeroClient
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the agent's input (when the writer is an io.Closer), which
// asks the agent to exit, and fails every pending call with
// [CodeClientClosed]. It closes between two lines when no line is being
// written; it never waits for a line in progress, which an agent that
// stopped reading its input could block forever, but closes under it (the
// agent sees a truncated line, never a message). It does not wait for the
// agent's output to end.
func (c *Client) Close() error {
	if c.w == nil {
		return nil
	}
	// End first, then close the input: an agent answers a pending call
	// when its input ends (a turn cut short ends "cancelled"), and that
	// answer, read after Close began, must not complete the call.
	c.end(checkfu.Refuse(CodeClientClosed, "acp: client closed"))
	if c.closer != nil {
		return c.w.closeWith(c.closer)
	}
	return nil
}

// Initialize sends initialize with protocol version 1 and waits for the
// answer. It may be called once; an agent answering another protocol
// version is refused with [CodeProtocolVersionUnsupported].
func (c *Client) Initialize(ctx context.Context) (*InitializeResponse, error) {
	if c.w == nil {
		return nil, errZeroClient
	}
	c.initMu.Lock()
	if c.init != initNone {
		c.initMu.Unlock()
		return nil, errors.New("acp: Initialize called twice")
	}
	c.init = initInFlight
	c.initMu.Unlock()

	var resp InitializeResponse
	err := c.call(ctx, MethodInitialize, InitializeRequest{
		ProtocolVersion: ProtocolVersion,
		ClientInfo:      c.cfg.ClientInfo,
	}, &resp)
	if err == nil && resp.ProtocolVersion != ProtocolVersion {
		err = checkfu.Refuse(CodeProtocolVersionUnsupported,
			"acp: agent answered protocol version %d, this client speaks %d; use an agent that supports ACP v1", resp.ProtocolVersion, ProtocolVersion)
	}
	c.initMu.Lock()
	if err != nil {
		c.init, c.initErr = initFailed, err
	} else {
		c.init = initDone
	}
	close(c.initReady)
	c.initMu.Unlock()
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

// initialized waits for an initialize in flight and reports whether it
// succeeded.
func (c *Client) initialized(ctx context.Context) error {
	c.initMu.Lock()
	st := c.init
	c.initMu.Unlock()
	if st == initNone {
		return checkfu.Refuse(CodeClientNotInitialized, "acp: call Initialize before any session method")
	}
	select {
	case <-c.initReady:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.initMu.Lock()
	defer c.initMu.Unlock()
	if c.init != initDone {
		return &checkfu.Refusal{Code: CodeClientNotInitialized, Message: "acp: initialize failed", Err: c.initErr}
	}
	return nil
}

// NewSession checks req against the configured [SessionLimits], then sends
// session/new and waits for the session id. A request over a limit is
// refused before anything is written to the agent; an answer without a
// session id is refused with [CodeMessageInvalid].
func (c *Client) NewSession(ctx context.Context, req NewSessionRequest) (*NewSessionResponse, error) {
	if c.w == nil {
		return nil, errZeroClient
	}
	if err := c.cfg.Limits.Check(&req); err != nil {
		return nil, err
	}
	if err := c.initialized(ctx); err != nil {
		return nil, err
	}
	var resp NewSessionResponse
	if err := c.call(ctx, MethodSessionNew, req, &resp); err != nil {
		return nil, err
	}
	if resp.SessionID == "" {
		return nil, checkfu.Refuse(CodeMessageInvalid, "acp: session/new was answered without a sessionId")
	}
	return &resp, nil
}

// Prompt sends session/prompt and waits for the end of the turn. Updates of
// the turn reach Config.OnUpdate before Prompt returns. A stop reason ACP
// v1 does not define is refused with [CodeMessageInvalid]. To end a turn
// early, call Cancel: the agent then answers with [StopCancelled].
// Cancelling ctx only stops waiting, except while the request is still
// being written (an agent that stopped reading its input): a line cut
// short cannot be taken back, so the client then ends.
func (c *Client) Prompt(ctx context.Context, sessionID string, prompt ...ContentBlock) (*PromptResponse, error) {
	if c.w == nil {
		return nil, errZeroClient
	}
	if err := c.initialized(ctx); err != nil {
		return nil, err
	}
	var resp PromptResponse
	if err := c.call(ctx, MethodSessionPrompt, PromptRequest{SessionID: sessionID, Prompt: prompt}, &resp); err != nil {
		return nil, err
	}
	if !resp.StopReason.Valid() {
		return nil, checkfu.Refuse(CodeMessageInvalid, "acp: session/prompt ended with stop reason %s, which ACP v1 does not define", checkfu.Quote(string(resp.StopReason)))
	}
	return &resp, nil
}

// Cancel sends session/cancel for sessionID, then answers every permission
// request of that session still pending with "cancelled", as ACP requires.
// The notification is written first, so the agent reads it before any of
// those answers: a turn that the answer ends cannot be followed by a
// session/cancel that arrives late and cancels the next turn. A request
// whose answer OnPermission committed ([CommitPermission]) is not pending:
// it is answered as OnPermission says.
func (c *Client) Cancel(sessionID string) error {
	if c.w == nil {
		return errZeroClient
	}
	params, err := json.Marshal(CancelNotification{SessionID: sessionID})
	if err == nil {
		err = c.w.WriteMessage(Message{Method: MethodSessionCancel, Params: params})
	}
	c.mu.Lock()
	for p := range c.perms[sessionID] {
		if !p.committed {
			p.cancel()
		}
	}
	c.mu.Unlock()
	return err
}

// call sends one request and decodes its result into out.
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return checkfu.Refuse(CodeMessageInvalid, "acp: cannot encode %s params: %v", method, err)
	}
	id := IntID(c.nextID.Add(1) - 1)
	ch := make(chan Message, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return closedErr(err)
	}
	c.pending[id] = pendingCall{method: method, ch: ch}
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := ctx.Err(); err != nil {
		forget()
		return err
	}
	// The write runs on its own goroutine so that ctx still bounds the
	// call when the agent stops reading its input. A line cut short can
	// be neither finished nor taken back, so a ctx that ends before the
	// line is written ends the client.
	written := make(chan error, 1)
	go func() { written <- c.w.WriteMessage(Message{ID: id, Method: method, Params: p}) }()
	var werr error
	select {
	case werr = <-written:
	case <-ctx.Done():
		select {
		case werr = <-written:
		default:
			c.abort(ctx.Err())
			forget()
			return ctx.Err()
		}
	}
	if werr != nil {
		forget()
		return werr
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if err := decodeMembers(m.Result, out); err != nil {
			return checkfu.Refuse(CodeMessageInvalid, "acp: %s result does not decode: %v", method, err)
		}
		return nil
	case <-c.done:
		forget()
		return closedErr(c.Err())
	case <-ctx.Done():
		forget()
		return ctx.Err()
	}
}

func closedErr(cause error) error {
	if errors.Is(cause, CodeClientClosed) {
		return cause
	}
	return &checkfu.Refusal{Code: CodeClientClosed, Message: "acp: the agent connection ended", Err: cause}
}

// abort ends the client because a request line was left half written:
// it closes the agent's input (which fails the write, when the writer is
// an io.Closer) and fails every call.
func (c *Client) abort(cause error) {
	c.end(&checkfu.Refusal{Code: CodeClientClosed, Message: "acp: a call's context ended before its request was written; the agent's input was closed", Err: cause})
	if c.closer != nil {
		_ = c.w.closeWith(c.closer)
	}
}

// end records why the client ended, once, and wakes every waiter.
func (c *Client) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	for _, ps := range c.perms {
		for p := range ps {
			p.cancel()
		}
	}
	close(c.done)
}
