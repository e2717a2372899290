package authz

import (
	"context"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
)

// An EvidenceKind names what an Evidence event records.
type EvidenceKind string

const (
	// EvidenceApprovalDecision records that an approver approved or denied
	// one exact action.
	EvidenceApprovalDecision EvidenceKind = "approval_decision"
	// EvidenceApprovalResult records what happened when an approved action
	// was (or was not) carried out. It is always a separate event from the
	// decision.
	EvidenceApprovalResult EvidenceKind = "approval_result"
	// EvidenceEdgeCall records one credentialed call through the outbound
	// edge: the authority it ran under and its terminal result.
	EvidenceEdgeCall EvidenceKind = "edge_call"
	// EvidenceGatewayDecision records the gateway's authority decision on
	// one tool call: allowed ([OutcomeApproved]) or refused
	// ([OutcomeRefused], with the code), before any effect.
	EvidenceGatewayDecision EvidenceKind = "gateway_decision"
	// EvidenceGatewayResult records the terminal result of a call the
	// gateway allowed. It is always a separate event from the decision.
	EvidenceGatewayResult EvidenceKind = "gateway_result"
	// EvidenceModelResult records the terminal result of an agent's own
	// model call that the gateway allowed (its decision is a
	// gateway_decision): the model, the tokens the provider reported,
	// the status and the duration. Never the prompt or the completion.
	EvidenceModelResult EvidenceKind = "model_result"
)

// An Outcome is the fact an Evidence event states.
type Outcome string

const (
	// OutcomeApproved: the approver approved the bound action.
	OutcomeApproved Outcome = "approved"
	// OutcomeDenied: the approver denied the bound action.
	OutcomeDenied Outcome = "denied"
	// OutcomeSucceeded: the effect ran and reported success.
	OutcomeSucceeded Outcome = "succeeded"
	// OutcomeFailed: the effect ran and reported a failure.
	OutcomeFailed Outcome = "failed"
	// OutcomeRefused: revalidation refused the effect; it did not run.
	OutcomeRefused Outcome = "refused"
)

// Evidence is one governance evidence event. It carries identifiers,
// digests and codes only: never a credential, never tool arguments (the
// action is referred to by its digest). Fields that do not apply to a kind
// are zero.
type Evidence struct {
	Kind EvidenceKind
	// Request is the context of the request the event belongs to, taken
	// from the plane's Go context (checkfu.RequestContextFrom); zero when
	// the caller carried none.
	Request  checkfu.RequestContext
	Label    checkfu.Label
	Time     time.Time
	Approval string // approval id
	Approver string
	Actor    string
	Grant    string // the lease id an action runs under
	Action   string // Action.Digest of the bound action
	Effect   Effect
	Scope    string
	Outcome  Outcome
	Code     checkfu.Code // the refusal or failure code, else empty

	// Edge calls only: the registered capability and tool (set once the
	// call resolved), the provider revision of the lease (set once the
	// lease was spent) and the provider's HTTP status (set whenever the
	// provider answered, even when the edge then withheld the answer: a
	// redirect, an echo of the credential, a body too large).
	Capability string
	Tool       string
	Provider   checkfu.ProviderRevision
	Status     int

	// Gateway events only: the permission assignment that allowed the
	// call (empty when none did).
	Assignment string

	// Channel is the gateway channel the event's call came through (the
	// channel's ID: one agent process's route to its tools), taken from
	// the plane's Go context ([ChannelFrom]) like Request; empty for an
	// event no channel stands behind, such as an approver's decision or
	// a call on a channel that is not open.
	Channel string

	// Cause is the operator's cause of a failure or refusal
	// (checkfu.Cause of the error: the dial or TLS error behind
	// upstream_failed, a store's error), or empty. It is for the
	// operator alone: never an identifier, never part of what sandbox
	// code is answered. eventlog/evidencelog seals it into the event's
	// content, which only a reader holding the log's keys opens.
	Cause string

	// Model calls only: the model the request named (on a decision only
	// when it is an allowed one, or a plain name that can stand in an
	// event), the tokens the provider reported, and how long the call
	// took from its decision to the end of its answer.
	Model        string
	InputTokens  int64
	OutputTokens int64
	Duration     time.Duration
}

type channelKey struct{}

// WithChannel returns a copy of ctx naming id as the gateway channel its
// call came through, for the hops of that call inside the trusted plane
// (custody/pipeline sets it beside the request context). Sandbox code
// holds no Go context, so it can neither set nor replace it. An empty id
// is not attached.
func WithChannel(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, channelKey{}, id)
}

// ChannelFrom returns the channel ctx names ([WithChannel]), or "".
func ChannelFrom(ctx context.Context) string {
	id, _ := ctx.Value(channelKey{}).(string)
	return id
}

// An EvidenceSink durably records evidence events in order. The eventlog
// package implements it; custodytest.MemoryEvidence is an in-memory
// implementation for tests. Record must return an error unless the event is recorded:
// callers treat an unrecorded decision as no decision.
type EvidenceSink interface {
	Record(ctx context.Context, ev Evidence) error
}

// An EvidenceError reports that an EvidenceSink failed to record an event.
// It is a failure, not a refusal.
type EvidenceError struct {
	Kind EvidenceKind
	Err  error
}

// Error returns "authz: recording KIND evidence: CAUSE".
func (e *EvidenceError) Error() string {
	return fmt.Sprintf("authz: recording %s evidence: %v", e.Kind, e.Err)
}

// Unwrap returns the sink's error.
func (e *EvidenceError) Unwrap() error { return e.Err }
