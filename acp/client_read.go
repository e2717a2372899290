package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
)

// JSON-RPC 2.0 error codes the client answers with.
const (
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
)

// readLoop reads the agent's output until it ends or breaks.
func (c *Client) readLoop() {
	var msgs []Message
	for {
		line, err := c.r.ReadLine()
		if err != nil {
			c.end(err)
			return
		}
		if n, ok := parseUpdate(line); ok {
			if c.cfg.OnUpdate != nil {
				c.cfg.OnUpdate(n)
			}
			continue
		}
		msgs, err = ParseLine(msgs[:0], line)
		if err != nil {
			c.end(err)
			return
		}
		for i := range msgs {
			c.dispatch(&msgs[i])
		}
		clear(msgs) // what a batch's messages hold must not outlive it
	}
}

// dispatch routes one message from the agent. It runs on the read
// goroutine and never blocks on anything but Config.OnUpdate.
func (c *Client) dispatch(m *Message) {
	switch {
	case m.IsResponse() && m.ID.raw == "null":
		// The agent could not parse or route something the client sent:
		// some call will never be answered. Fail closed.
		r := &checkfu.Refusal{Code: CodeMessageInvalid, Message: "acp: the agent answered a message it could not identify (null id)"}
		if m.Error != nil {
			r.Err = m.Error
		}
		c.end(r)
	case m.IsResponse():
		c.mu.Lock()
		if c.err != nil {
			// Ended (by Close): an answer read now came after the
			// end, and the calls waiting for one fail instead.
			c.mu.Unlock()
			return
		}
		call, ok := c.pending[m.ID]
		delete(c.pending, m.ID)
		if ok && call.method == MethodSessionNew && m.Error == nil {
			// Known before any later line is dispatched, so that the
			// session's permission requests are never taken for a
			// stranger's.
			var s NewSessionResponse
			if decodeMembers(m.Result, &s) == nil && s.SessionID != "" {
				c.sessions[s.SessionID] = struct{}{}
			}
		}
		c.mu.Unlock()
		if ok {
			call.ch <- *m // buffered, never blocks
		}
	case m.Method == MethodSessionUpdate && m.IsNotification():
		if c.cfg.OnUpdate == nil {
			return
		}
		var n SessionNotification
		if err := decodeMembers(m.Params, &n); err != nil {
			return // an undecodable update carries nothing a Runner can act on
		}
		c.cfg.OnUpdate(n)
	case m.Method == MethodRequestPermission && m.IsRequest():
		if !fewOptions(m.Params) {
			// Decoding the options would hold 48 bytes for each 3 bytes
			// of "{}," on the line (a 16 MiB line: 268 MiB): refuse to
			// decode them, and answer as a user who gave up would.
			c.refused(errOptionsTooMany)
			res, _ := json.Marshal(RequestPermissionResponse{Outcome: CancelledOutcome()})
			_ = c.w.WriteMessage(Message{ID: m.ID, Result: res})
			return
		}
		var req RequestPermissionRequest
		if err := decodeMembers(m.Params, &req); err != nil {
			c.refused(errPermissionInvalid)
			c.replyError(m.ID, rpcInvalidParams, "invalid session/request_permission params")
			return
		}
		c.startPermission(m.ID, req)
	case m.IsRequest():
		c.replyError(m.ID, rpcMethodNotFound, "method not supported by this client: "+checkfu.Quote(m.Method))
	}
	// Other notifications are ignored, as JSON-RPC allows.
}

func (c *Client) replyError(id ID, code int, msg string) {
	_ = c.w.WriteMessage(Message{ID: id, Error: &RPCError{Code: code, Message: msg}})
}

// maxPendingPermissions bounds the permission requests being answered at
// once, so that an agent flooding them cannot hold a goroutine (and a
// prompt to a user) for each.
const maxPendingPermissions = 64

// startPermission answers one permission request on its own goroutine. It
// denies at once, without asking Config.OnPermission, a request for a
// session that session/new did not create on this client (which covers
// every request before initialize is answered), and one beyond
// maxPendingPermissions in flight or beyond Config.MaxPendingPermissionBytes
// held by them.
func (c *Client) startPermission(id ID, req RequestPermissionRequest) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &permCall{c: c, ctx: ctx, cancel: cancel}
	held := req.heldBytes()
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		cancel()
		return
	}
	_, known := c.sessions[req.SessionID]
	var refusal error
	switch {
	case !known:
		refusal = errSessionUnknown
	case c.nperms >= maxPendingPermissions || held > c.maxPermissionBytes()-c.permBytes:
		refusal = errPermissionsPending
	}
	if refusal != nil {
		c.mu.Unlock()
		cancel()
		c.refused(refusal)
		res, _ := json.Marshal(RequestPermissionResponse{Outcome: decide(ctx, nil, req)})
		_ = c.w.WriteMessage(Message{ID: id, Result: res})
		return
	}
	c.nperms++
	c.permBytes += held
	if c.perms[req.SessionID] == nil {
		c.perms[req.SessionID] = map[*permCall]struct{}{}
	}
	c.perms[req.SessionID][p] = struct{}{}
	c.mu.Unlock()
	go func() {
		defer cancel()
		out := decide(context.WithValue(ctx, permKey{}, p), c.cfg.OnPermission, req)
		c.mu.Lock()
		c.nperms--
		c.permBytes -= held
		delete(c.perms[req.SessionID], p)
		if len(c.perms[req.SessionID]) == 0 {
			delete(c.perms, req.SessionID)
		}
		// Every cancel of ctx is made under mu while p is in perms, so
		// what ctx says here is final.
		cancelled := ctx.Err() != nil && !p.committed
		c.mu.Unlock()
		if cancelled {
			out = CancelledOutcome()
		}
		res, _ := json.Marshal(RequestPermissionResponse{Outcome: out})
		_ = c.w.WriteMessage(Message{ID: id, Result: res})
	}()
}

// The refusals the client decides alone; they name nothing the agent
// sent.
var (
	errSessionUnknown     = checkfu.Refuse(CodePermissionSessionUnknown, "acp: a permission request names a session this client did not create; denied")
	errPermissionsPending = checkfu.Refuse(CodePermissionsPending, "acp: a permission request arrived over the bound on pending requests; denied")
	errOptionsTooMany     = checkfu.Refuse(CodePermissionOptionsTooMany, "acp: a permission request offers more than %d options; cancelled", maxPermissionOptions)
	errPermissionInvalid  = checkfu.Refuse(CodeMessageInvalid, "acp: session/request_permission params do not decode; refused")
)

// refused tells Config.OnRefusal of a permission request the client
// answers alone, before the answer is written: the agent learns of the
// refusal after the Runner did.
func (c *Client) refused(err error) {
	if c.cfg.OnRefusal != nil {
		c.cfg.OnRefusal(err)
	}
}

// maxPermissionOptions bounds the options of one permission request; ACP
// agents offer two to four.
const maxPermissionOptions = 64

// fewOptions reports whether the "options" member of a
// session/request_permission's params, found as encoding/json finds it,
// is absent or holds at most maxPermissionOptions elements. It counts them
// without decoding them.
func fewOptions(params []byte) bool {
	var p struct {
		Options json.RawMessage `json:"options"`
	}
	if decodeMembers(params, &p) != nil {
		return true // the full decode refuses it as invalid params
	}
	if len(p.Options) == 0 || p.Options[0] != '[' {
		return true
	}
	s := scanner{b: p.Options, i: 1}
	for n := 0; ; n++ {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] == ']' {
			return true
		}
		if s.b[s.i] == ',' {
			s.i++
			s.space()
		}
		if n == maxPermissionOptions || s.value(0, anyShape) != nil {
			return n < maxPermissionOptions
		}
	}
}

// maxPermissionBytes is Config.MaxPendingPermissionBytes or its default.
func (c *Client) maxPermissionBytes() int {
	return orDefault(c.cfg.MaxPendingPermissionBytes, DefaultMaxPendingPermissionBytes)
}

// decide returns the handler's outcome, or the deny default.
func decide(ctx context.Context, h func(context.Context, RequestPermissionRequest) PermissionOutcome, req RequestPermissionRequest) PermissionOutcome {
	if h != nil {
		return h(ctx, req)
	}
	for _, o := range req.Options {
		if o.Kind == "reject_once" || o.Kind == "reject_always" {
			return Select(o.OptionID)
		}
	}
	return CancelledOutcome()
}

// updateEnvelope is a session/update notification, decoded in one pass.
// It has no id, result or error member, so a line holding one of them (or
// any unknown member) does not decode as one.
type updateEnvelope struct {
	JSONRPC string               `json:"jsonrpc"`
	Method  string               `json:"method"`
	Params  *SessionNotification `json:"params"` // nil for null or absent: no update
}

var updateMethod = []byte(`"session/update"`)

// parseUpdate is the fast path of the update burst: it decodes a line that
// is exactly one well-formed session/update notification in one strict
// pass, and reports false for anything else, which then takes the general
// path (ParseLine, dispatch) with the same outcome, only slower.
func parseUpdate(line []byte) (SessionNotification, bool) {
	if len(line) == 0 || line[0] != '{' || !bytes.Contains(line, updateMethod) || !utf8.Valid(line) {
		return SessionNotification{}, false
	}
	var e updateEnvelope
	if decodeOne(line, &e) != nil || e.JSONRPC != "2.0" || e.Method != MethodSessionUpdate {
		return SessionNotification{}, false
	}
	if checkStrict(line) != nil {
		return SessionNotification{}, false
	}
	if e.Params == nil {
		return SessionNotification{}, false
	}
	return *e.Params, true
}
