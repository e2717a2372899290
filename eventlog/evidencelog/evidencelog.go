package evidencelog

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/eventlog"
)

// A Sink is a authz.EvidenceSink that appends to one session of a Log.
type Sink struct {
	log     *eventlog.Log
	session string
}

var _ authz.EvidenceSink = (*Sink)(nil)

// New returns a Sink appending to session in l. A nil l, or one without a
// store, is refused with eventlog.CodeStoreMissing.
func New(l *eventlog.Log, session string) (*Sink, error) {
	if l.Store() == nil {
		return nil, checkfu.Refuse(eventlog.CodeStoreMissing, "evidencelog: New needs a Log built with eventlog.New")
	}
	if err := eventlog.CheckSession(session); err != nil {
		return nil, err
	}
	return &Sink{log: l, session: session}, nil
}

// Record implements authz.EvidenceSink: it appends ev as one event and
// returns once the event is durable. ev.Cause goes into the event's
// sealed content ([Operator]) when the log takes content (it has keys);
// a log without keys records the event without it.
func (s *Sink) Record(ctx context.Context, ev authz.Evidence) error {
	e, err := Event(ev)
	if err != nil {
		return err
	}
	if !s.log.TakesContent() {
		e.Content = nil
	}
	_, err = s.log.Append(ctx, s.session, e)
	return err
}

// Operator is the operator's part of an event: what the event's content
// holds when the evidence carried a cause, as JSON. Nothing in it is
// shown to sandbox code or enters the envelope; it is sealed under the
// log's keys, and only a reader holding them opens it ([eventlog.Log.Content],
// then [ParseOperator]).
type Operator struct {
	// Cause is the evidence's Cause: the operator's cause of a failure
	// or refusal, bounded and quoted by checkfu.Cause.
	Cause string `json:"cause"`
}

// ParseOperator decodes an event's content written by [Event]. Content
// that is not an Operator object is refused with [CodeEvidenceUnknown].
func ParseOperator(content []byte) (Operator, error) {
	var op Operator
	if err := json.Unmarshal(content, &op); err != nil || op.Cause == "" {
		return Operator{}, checkfu.Refuse(CodeEvidenceUnknown, "evidencelog: the content is not an operator's part")
	}
	return op, nil
}

// Event maps one custody evidence event to an eventlog event.
//
// Every kind carries the whole request context of ev.Request: Request,
// Run, Actor, Role, Tenant, Workspace, Project, Session and Release become
// RequestID, RunID, Actor, Role, Tenant, Workspace, Project, SessionID and
// Release. Actor is ev.Actor when set (the actor the authority bound),
// else the context's. Evidence without a context (a zero ev.Request and
// no Actor) maps to an event with every context field empty: that is how
// the log records a fact no authenticated context stands behind.
//
// A model call's decision is a gateway decision whose tool is the model
// the request named (when it can stand in an event). Its result
// (model_result) maps to a settlement event, the budget it moved: Tool.Name
// is the model, EffectID the model registration, Grant the lease, Result
// "http_NNN" when the provider answered, else the outcome, Code the
// refusal or failure code, and Scope the usage as
// "in=TOKENS/out=TOKENS/ms=DURATION". No prompt or completion is in any
// of them.
//
// Approval decisions and results map to approval_decision and
// approval_result events. Approved maps to an allow decision; denied and
// refused to deny; succeeded and failed, which are results rather than
// decisions, to no decision. The outcome itself is kept as the event's
// result.
//
// An edge call (one credentialed call through custody's outbound edge)
// maps to a tool_call event that holds the authority decision and the
// terminal result together: Tool.Name is the tool, EffectID the
// capability registration the call ran through, Provider the provider
// revision of the lease it spent; Decision is deny for a refused call and
// allow for one that was sent (whether it then succeeded or failed);
// Result is "http_NNN" when a response was read, else the outcome; Code
// is the refusal or failure code.
//
// ev.Cause, when set, becomes the event's content: an [Operator] object,
// never an envelope field, so that [eventlog.Entry] (its JSON, the
// table) shows the code alone and the cause only reaches a reader
// holding the log's keys.
func Event(ev authz.Evidence) (eventlog.Event, error) {
	e := eventlog.Event{
		Label: ev.Label, Time: ev.Time, ApprovalID: ev.Approval, Approver: ev.Approver,
		Actor: ev.Actor, Grant: ev.Grant, Action: ev.Action, Scope: ev.Scope,
		Result: string(ev.Outcome), Code: string(ev.Code),
		RequestID: ev.Request.Request, RunID: ev.Request.Run, Release: ev.Request.Release,
		Role: ev.Request.Role, Tenant: ev.Request.Tenant, Workspace: ev.Request.Workspace,
		Project: ev.Request.Project, SessionID: ev.Request.Session,
		Channel: ev.Channel,
	}
	if e.Actor == "" {
		e.Actor = ev.Request.Actor
	}
	var err error
	switch ev.Kind {
	case authz.EvidenceApprovalDecision:
		e.Kind = eventlog.KindApprovalDecision
		e.Decision, err = approvalDecision(ev.Outcome)
	case authz.EvidenceApprovalResult:
		e.Kind = eventlog.KindApprovalResult
		e.Decision, err = approvalDecision(ev.Outcome)
	case authz.EvidenceEdgeCall:
		err = edgeCall(&e, ev)
	case authz.EvidenceGatewayDecision:
		err = gatewayDecision(&e, ev)
	case authz.EvidenceGatewayResult:
		err = gatewayResult(&e, ev)
	case authz.EvidenceModelResult:
		err = modelResult(&e, ev)
	default:
		err = checkfu.Refuse(CodeEvidenceUnknown, "evidencelog: evidence kind %s is not mapped", checkfu.Quote(string(ev.Kind)))
	}
	if err != nil {
		return eventlog.Event{}, err
	}
	if ev.Effect.Valid() {
		e.EffectClass = ev.Effect.String()
	}
	if ev.Cause != "" {
		e.Content, _ = json.Marshal(Operator{Cause: ev.Cause}) // a struct of one string always marshals
	}
	if err := e.Validate(); err != nil {
		return eventlog.Event{}, err
	}
	return e, nil
}

// approvalDecision maps the outcome of an approval decision or result.
func approvalDecision(o authz.Outcome) (eventlog.Decision, error) {
	switch o {
	case authz.OutcomeApproved:
		return eventlog.DecisionAllow, nil
	case authz.OutcomeDenied, authz.OutcomeRefused:
		return eventlog.DecisionDeny, nil
	case authz.OutcomeSucceeded, authz.OutcomeFailed:
		return eventlog.DecisionNone, nil
	}
	return eventlog.DecisionNone, checkfu.Refuse(CodeEvidenceUnknown, "evidencelog: evidence outcome %s is not mapped", checkfu.Quote(string(o)))
}

// edgeCall fills in the fields of an edge call's event; e holds the
// common fields.
func edgeCall(e *eventlog.Event, ev authz.Evidence) error {
	e.Kind = eventlog.KindToolCall
	e.Tool = eventlog.ToolDescriptor{Name: ev.Tool}
	e.EffectID = ev.Capability
	e.Provider = ev.Provider
	switch ev.Outcome {
	case authz.OutcomeRefused:
		e.Decision = eventlog.DecisionDeny
	case authz.OutcomeSucceeded, authz.OutcomeFailed:
		e.Decision = eventlog.DecisionAllow
		if ev.Status > 0 {
			e.Result = "http_" + strconv.Itoa(ev.Status)
		}
	default:
		return checkfu.Refuse(CodeEvidenceUnknown, "evidencelog: edge call outcome %s is not mapped", checkfu.Quote(string(ev.Outcome)))
	}
	return nil
}

// gatewayDecision maps the gateway's authority decision on a call: an
// allowed call is a tool_call event with decision allow and result
// "authorized"; a refused one is a denial with its code. EffectID is the
// capability, Grant the lease once spent, and Scope the permission
// assignment that allowed the call.
func gatewayDecision(e *eventlog.Event, ev authz.Evidence) error {
	e.Tool = eventlog.ToolDescriptor{Name: ev.Tool}
	e.EffectID = ev.Capability
	e.Provider = ev.Provider
	if e.Scope == "" {
		e.Scope = ev.Assignment
	}
	switch ev.Outcome {
	case authz.OutcomeApproved:
		e.Kind, e.Decision, e.Result = eventlog.KindToolCall, eventlog.DecisionAllow, "authorized"
	case authz.OutcomeRefused:
		e.Kind, e.Decision = eventlog.KindDenial, eventlog.DecisionDeny
	default:
		return checkfu.Refuse(CodeEvidenceUnknown, "evidencelog: gateway decision outcome %s is not mapped", checkfu.Quote(string(ev.Outcome)))
	}
	return nil
}

// gatewayResult maps the terminal result of an allowed call: a tool_call
// event with no decision, whose result is "http_NNN" when the provider
// answered, else the outcome.
func gatewayResult(e *eventlog.Event, ev authz.Evidence) error {
	e.Kind = eventlog.KindToolCall
	return result(e, ev, ev.Tool, "gateway")
}

// result fills what a tool call's and a model call's result share: the
// name, the effect, the provider, and "http_NNN" when the provider
// answered. what names the kind of result in the error.
func result(e *eventlog.Event, ev authz.Evidence, name, what string) error {
	e.Tool = eventlog.ToolDescriptor{Name: name}
	e.EffectID = ev.Capability
	e.Provider = ev.Provider
	switch ev.Outcome {
	case authz.OutcomeSucceeded, authz.OutcomeFailed, authz.OutcomeRefused:
		if ev.Status > 0 {
			e.Result = "http_" + strconv.Itoa(ev.Status)
		}
	default:
		return checkfu.Refuse(CodeEvidenceUnknown, "evidencelog: %s result outcome %s is not mapped", what, checkfu.Quote(string(ev.Outcome)))
	}
	return nil
}

// modelResult maps the result of a model call to a settlement event.
func modelResult(e *eventlog.Event, ev authz.Evidence) error {
	e.Kind = eventlog.KindSettlement
	if err := result(e, ev, ev.Model, "model"); err != nil {
		return err
	}
	e.Scope = "in=" + strconv.FormatInt(max(ev.InputTokens, 0), 10) + "/out=" + strconv.FormatInt(max(ev.OutputTokens, 0), 10) +
		"/ms=" + strconv.FormatInt(max(ev.Duration.Milliseconds(), 0), 10)
	return nil
}
