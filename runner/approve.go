package runner

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// MaxPermissionBytes bounds the tool call object of a permission request
// the Runner reads.
const MaxPermissionBytes = 64 << 10

// An ApprovalRequest is what the Approver is asked: one external_effect
// action, bound to the session's actor, lease and session. Arguments are
// the canonical arguments the approval binds (the action's body); Action
// is their digest with the rest of the action.
type ApprovalRequest struct {
	Context    checkfu.RequestContext
	Tool       string
	Capability string
	Effect     authz.Effect
	Action     string
	Arguments  json.RawMessage
}

// An Approval is the Approver's answer. Approver names who decided; it may
// not be the actor the action runs for (authz refuses that). A zero TTL
// means DefaultApprovalTTL.
type Approval struct {
	Approve  bool
	Approver string
	TTL      time.Duration
}

// An Approver decides external_effect actions, as a person or a policy
// of the platform would. It may block (waiting for a person); ctx ends
// when the agent's turn is cancelled, and an answer returned after that
// is refused and not booked: the agent is answered "cancelled".
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Approval, error)
}

// ApproverFunc adapts a function to an Approver.
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (Approval, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (Approval, error) {
	return f(ctx, req)
}

// permissionCall is what the Runner reads of a permission request's tool
// call: ACP's title names the profile's tool, and rawInput holds the
// arguments the agent will call it with. Every other member is ignored.
type permissionCall struct {
	ToolCallID string          `json:"toolCallId"`
	Title      string          `json:"title"`
	RawInput   json.RawMessage `json:"rawInput"`
}

// ownCall is what the Runner reads of a permission request's tool call
// when it names no tool of the profile, the agent's own tool: kind is
// ACP's ToolKind and locations the paths the call touches, as the
// request itself states them (never as an earlier tool_call update did).
type ownCall struct {
	Title     string `json:"title"`
	Kind      string `json:"kind"`
	Locations []struct {
		Path string `json:"path"`
	} `json:"locations"`
}

// paths returns the paths of c's locations.
func (c *ownCall) paths() []string {
	out := make([]string, len(c.Locations))
	for i, l := range c.Locations {
		out[i] = l.Path
	}
	return out
}

// decodeOwn reads the tool call of req as ownCall, bounded by
// MaxPermissionBytes.
func decodeOwn(req acp.RequestPermissionRequest) (ownCall, error) {
	var call ownCall
	if err := strictjson.Unmarshal(req.ToolCall.Raw, &call, strictjson.Options{MaxBytes: MaxPermissionBytes, AllowUnknownMembers: true}); err != nil {
		return ownCall{}, checkfu.Refuse(CodePermissionUnbound, "runner: the permission request's tool call is not a JSON object: %v", err)
	}
	return call, nil
}

// profileTool reports whether a permission request names a tool of the
// Runner's profile as bind finds it: by its title, the tool's own name or
// the name agent's model sees for it, or by the tool call the agent
// announced under the request's id (harness.toolCall).
func (s *Session) profileTool(agent *harness, req acp.RequestPermissionRequest, title string) bool {
	titles := []string{title}
	if noted, ok := agent.toolCall(req.ToolCall.ToolCallID); ok {
		titles = append(titles, noted.Title)
	}
	for _, t := range s.r.tools {
		for _, title := range titles {
			if t.Tool == title || agent.names(t.Tool, title) {
				return true
			}
		}
	}
	return false
}

// tracedPermission is permission inside the span of the step
// "permission", under the session's trace parent (the agent's request
// cannot carry the host's context).
func (s *Session) tracedPermission(ctx context.Context, p *plane, ch *gateway.Channel, lease, root string, agent *harness, req acp.RequestPermissionRequest) acp.PermissionOutcome {
	if sc := s.parent.Load(); sc != nil && !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, *sc)
	}
	ctx, span := s.step(ctx, "permission")
	defer span.End()
	return s.permission(ctx, p, ch, lease, root, agent, req)
}

// permission answers an agent's session/request_permission. It is step
// 6's approval half: a request that names an external_effect tool of the
// profile with arguments that tool accepts is bound to the exact action
// (authz.Action.Digest), the session's actor, lease and session, and put
// to the Approver; its decision is recorded by authz.Approvals.Decide in
// the session log. The gateway later finds that approval itself when the
// call arrives; the agent never names it. A request that names a
// read_only tool of the profile with arguments it accepts is allowed
// without the Approver and logged (KindSkip, ResultReadOnlyPermission).
// A request that names no tool of the profile (see profileTool), or any
// request of a capability-free session, is the agent's own tool: it is
// allowed without the Approver and logged (KindSkip,
// CodeWorkspaceReadPermission) when its own ACP kind and locations make
// it a read of the workspace under root (see workspaceRead). Anything
// else is denied with CodePermissionUnbound, and an action the session's
// actor holds no permission assignment for with
// authz.CodePermissionMissing, logged, without asking the Approver.
func (s *Session) permission(ctx context.Context, p *plane, ch *gateway.Channel, lease, root string, agent *harness, req acp.RequestPermissionRequest) acp.PermissionOutcome {
	// The asking agent's channel: every record of the request names it
	// (Session.append), the approval's decision too.
	ctx = authz.WithChannel(checkfu.WithRequestContext(ctx, s.rc), channelID(ch))
	if s.refusals.pace(ctx) != nil {
		// The budget is spent, or the request was cancelled while it
		// waited for the rate.
		return reject(req)
	}
	own, err := decodeOwn(req)
	if err == nil && (p == nil || !s.profileTool(agent, req, own.Title)) {
		ok, why := workspaceRead(root, own.Kind, own.paths())
		if ok {
			// Nothing is asked: the agent's own tool reads inside its
			// sandbox.
			return s.allowUnasked(ctx, eventlog.Event{Grant: lease}, CodeWorkspaceReadPermission, req)
		}
		if p == nil {
			// A capability-free session has no tool to approve.
			err = checkfu.Refuse(CodePermissionUnbound, "runner: the session holds no capability, and the request is no workspace read: %s", why)
		} else {
			err = checkfu.Refuse(CodePermissionUnbound, "runner: the permission request names no tool of the profile (title %s) and is no workspace read: %s", checkfu.Quote(own.Title), why)
		}
	}
	if err != nil {
		_ = s.refuse(ctx, &eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedPermission), Grant: lease}, err)
		return reject(req)
	}
	ar, binding, err := s.bind(ch, agent, req)
	if errors.Is(err, errReadOnlyPermission) {
		// Nothing is asked: the agent is told yes, and the call still
		// meets the gateway's checks.
		return s.allowUnasked(ctx, eventlog.Event{Action: ar.Action, Grant: lease}, ResultReadOnlyPermission, req)
	}
	if err == nil && s.r.cfg.Approver == nil {
		err = checkfu.Refuse(authz.CodeApprovalDenied, "runner: no Approver is configured")
	}
	if err != nil {
		_ = s.refuse(ctx, &eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedPermission), Grant: lease}, err)
		return reject(req)
	}
	dec, err := s.r.cfg.Approver.Approve(ctx, ar)
	if err == nil && !acp.CommitPermission(ctx) {
		// The request was cancelled (Agent.Cancel, Close) while the
		// Approver decided, and the agent is answered "cancelled": an
		// answer it was never given is not booked for it to spend.
		// Committed, the answer below is the one the agent gets, even
		// if a cancel lands while it is booked.
		err = checkfu.Refuse(authz.CodeApprovalDenied, "runner: the permission request was cancelled before the Approver answered; its answer is not booked")
	}
	if err != nil {
		_ = s.refuse(ctx, &eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedApprover), Action: ar.Action, Grant: lease}, err)
		return reject(req)
	}
	ttl := dec.TTL
	if ttl == 0 {
		ttl = DefaultApprovalTTL
	}
	// Committed, the answer stands whatever ends ctx now (the client's
	// end does): the approval is booked and logged whole, as the
	// Runner's records of an ended turn are, so the log never holds a
	// decision the book does not.
	if _, err := p.approvals.Decide(context.WithoutCancel(ctx), authz.ApprovalDecision{Binding: binding, Approver: dec.Approver, Approve: dec.Approve, TTL: ttl}); err != nil || !dec.Approve {
		if err != nil {
			_ = s.refuse(ctx, &eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedApproval), Action: ar.Action, Grant: lease}, err)
		} else {
			// Declined: authz recorded the decision; it spends the
			// budget all the same.
			_ = s.refuse(ctx, nil, nil)
		}
		return reject(req)
	}
	return allow(req)
}

// allowUnasked allows a permission request the Runner answers without
// the Approver, logged as a skipped approval (ev, of kind KindSkip, with
// result), once the answer is committed (acp.CommitPermission): a
// request cancelled before is answered "cancelled", and no allow is
// logged for it.
func (s *Session) allowUnasked(ctx context.Context, ev eventlog.Event, result ResultCode, req acp.RequestPermissionRequest) acp.PermissionOutcome {
	if !acp.CommitPermission(ctx) {
		return reject(req)
	}
	ev.Kind = eventlog.KindSkip
	_ = s.decide(ctx, ev, nil, result)
	return allow(req)
}

// ResultReadOnlyPermission is the result of the log entry that records a
// permission request for a read_only tool of the profile, allowed without
// the Approver.
const ResultReadOnlyPermission = "read_only_permission"

// errReadOnlyPermission is bind's answer for a read_only tool of the
// profile whose dry run passes: allowed, never put to the Approver.
var errReadOnlyPermission = errors.New("runner: read_only tool")

// bind resolves a permission request to the action it asks for, and the
// binding the pipeline's dry run gives it. The request's title names a
// profile tool by its name, or, for an agent launched from a harness
// entry (agent non-nil), by the name that agent's model sees for it
// through the door's MCP server (mcp__checkfu__list_issues).
func (s *Session) bind(ch *gateway.Channel, agent *harness, req acp.RequestPermissionRequest) (ApprovalRequest, authz.ApprovalBinding, error) {
	var call permissionCall
	if err := strictjson.Unmarshal(req.ToolCall.Raw, &call, strictjson.Options{MaxBytes: MaxPermissionBytes, AllowUnknownMembers: true}); err != nil {
		return ApprovalRequest{}, authz.ApprovalBinding{}, checkfu.Refuse(CodePermissionUnbound, "runner: the permission request's tool call is not a JSON object: %v", err)
	}
	if noted, ok := agent.toolCall(call.ToolCallID); ok {
		// The agent's request names no tool (codex-acp): the tool call
		// it announced under the same id does.
		call = noted
	}
	for _, t := range s.r.tools {
		byAgent := t.Tool != call.Title
		if byAgent && !agent.names(t.Tool, call.Title) {
			continue
		}
		args := call.RawInput
		if byAgent && agent.launch.PermissionArguments != "" {
			// The agent wraps the arguments (codex-acp: {"server",
			// "tool", "arguments"}): the dry run binds the wrapped ones.
			var wrapped map[string]json.RawMessage
			if err := strictjson.Unmarshal(args, &wrapped, strictjson.Options{MaxBytes: MaxPermissionBytes, AllowUnknownMembers: true}); err != nil {
				return ApprovalRequest{}, authz.ApprovalBinding{}, checkfu.Refuse(CodePermissionUnbound, "runner: the permission request's rawInput is not a JSON object: %v", err)
			}
			args = wrapped[agent.launch.PermissionArguments]
		}
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		// The pipeline's dry run: the action the call will be, bound to
		// the session's actor, lease and session, or the refusal the
		// call would get. Nobody is asked to approve what the gateway
		// would refuse to the actor anyway.
		plan, err := ch.Plan(t.Capability, args)
		switch {
		case errors.Is(err, authz.CodePermissionMissing):
			return ApprovalRequest{}, authz.ApprovalBinding{}, err
		case err != nil:
			return ApprovalRequest{}, authz.ApprovalBinding{}, checkfu.Refuse(CodePermissionUnbound, "runner: tool %s would be refused: %v", checkfu.Quote(t.Tool), err)
		case plan.Effect != authz.ExternalEffect:
			// A read_only tool of the profile whose dry run passes is
			// allowed without asking anyone: the gateway still checks
			// the call itself when it arrives.
			return ApprovalRequest{Context: s.rc, Tool: t.Tool, Capability: plan.Capability, Effect: plan.Effect, Action: plan.Action}, authz.ApprovalBinding{}, errReadOnlyPermission
		}
		return ApprovalRequest{Context: s.rc, Tool: t.Tool, Capability: plan.Capability, Effect: plan.Effect, Action: plan.Action, Arguments: plan.Arguments}, plan.Binding, nil
	}
	return ApprovalRequest{}, authz.ApprovalBinding{}, checkfu.Refuse(CodePermissionUnbound, "runner: the permission request names no external_effect tool of the profile (title %s)", checkfu.Quote(call.Title))
}

// allow selects the request's first allow_once option; reject its first
// reject option, or cancels when it offers none.
func allow(req acp.RequestPermissionRequest) acp.PermissionOutcome {
	for _, o := range req.Options {
		if o.Kind == "allow_once" {
			return acp.Select(o.OptionID)
		}
	}
	return reject(req)
}

func reject(req acp.RequestPermissionRequest) acp.PermissionOutcome {
	for _, o := range req.Options {
		if o.Kind == "reject_once" || o.Kind == "reject_always" {
			return acp.Select(o.OptionID)
		}
	}
	return acp.CancelledOutcome()
}

// MaxNotedToolCalls bounds the tool calls the Runner remembers of an
// agent whose harness entry binds permission requests by tool call
// (admission.AgentLaunch.PermissionByToolCall): the most recent ones are
// kept, an older one is forgotten and a permission request naming it is
// unbound.
const MaxNotedToolCalls = 64

// A harness is an agent's harness entry, as the Runner uses it to bind
// its permission requests, with the tool calls it announced. A nil
// harness binds by the tool's own name only.
type harness struct {
	launch *admission.AgentLaunch

	mu    sync.Mutex
	calls map[string]permissionCall // guarded by mu
	order []string                  // guarded by mu: ids, oldest first
}

// newHarness returns the harness of a copy of launch, or nil.
func newHarness(launch *admission.AgentLaunch) *harness {
	if launch == nil {
		return nil
	}
	c := *launch
	return &harness{launch: &c, calls: map[string]permissionCall{}}
}

// names reports whether title is the name the harness's permission
// requests give the profile's tool (admission.AgentLaunch.Permission):
// mcp__checkfu__list_issues for Claude Code.
func (h *harness) names(tool, title string) bool {
	if h == nil {
		return false
	}
	name := h.launch.Permission(MCPServerName, tool)
	return name != "" && name == title
}

// note remembers a tool call the agent announced (session/update
// tool_call), when its harness binds permission requests by tool call.
func (h *harness) note(n acp.SessionNotification) {
	if h == nil || !h.launch.PermissionByToolCall || n.Kind() != "tool_call" {
		return
	}
	var call permissionCall
	if strictjson.Unmarshal(n.Update, &call, strictjson.Options{MaxBytes: MaxPermissionBytes, AllowUnknownMembers: true}) != nil || call.ToolCallID == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.calls[call.ToolCallID]; !ok {
		h.order = append(h.order, call.ToolCallID)
	}
	h.calls[call.ToolCallID] = call
	if len(h.order) > MaxNotedToolCalls {
		delete(h.calls, h.order[0])
		h.order = h.order[1:]
	}
}

// toolCall returns the tool call the agent announced as id, when its
// harness binds permission requests by tool call.
func (h *harness) toolCall(id string) (permissionCall, bool) {
	if h == nil || !h.launch.PermissionByToolCall || id == "" {
		return permissionCall{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.calls[id]
	return c, ok
}

// channelID returns ch's ID, or "" for no channel.
func channelID(ch *gateway.Channel) string {
	if ch == nil {
		return ""
	}
	return ch.ID()
}
