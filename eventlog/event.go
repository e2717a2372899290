package eventlog

import (
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
)

// A Kind says what an event records. The zero Kind is not a kind: an event
// without one is refused.
type Kind uint8

// The kinds of event a session log holds.
const (
	kindInvalid Kind = iota
	// KindToolCall records a tool invocation and its terminal result.
	KindToolCall
	// KindApprovalDecision records an approver's decision on an action.
	KindApprovalDecision
	// KindApprovalResult records the effect an approved action had. It is
	// a separate event from the decision, so the two are separate evidence.
	KindApprovalResult
	// KindDenial records an action refused by policy or authority.
	KindDenial
	// KindSettlement records a settled charge or budget movement.
	KindSettlement
	// KindProcessStarted records a sandbox process starting.
	KindProcessStarted
	// KindProcessExited records a sandbox process ending.
	KindProcessExited
	// KindAdmission records an admission decision on a session or profile.
	KindAdmission
	// KindSkip records a step deliberately not taken, such as
	// "memory_writeback_skipped".
	KindSkip
	// KindShred records that the content of an earlier event was
	// shredded; [Entry.ShredOf] names that event's seq. Only [Log.Shred]
	// appends it: a content row missing without one was deleted behind
	// the log's back, and [Verify] says so.
	KindShred
	// KindTurnEnded records the end of an agent's prompt turn: its
	// Result is the ACP stop reason (end_turn, cancelled, max_tokens,
	// max_turn_requests, refusal), or why the turn ended without one.
	KindTurnEnded
	kindEnd
)

var kindNames = [...]string{
	kindInvalid:          "",
	KindToolCall:         "tool_call",
	KindApprovalDecision: "approval_decision",
	KindApprovalResult:   "approval_result",
	KindDenial:           "denial",
	KindSettlement:       "settlement",
	KindProcessStarted:   "process_started",
	KindProcessExited:    "process_exited",
	KindAdmission:        "admission",
	KindSkip:             "skip",
	KindShred:            "shred",
	KindTurnEnded:        "turn_ended",
}

// ParseKind parses the snake_case name of a kind, exactly.
func ParseKind(s string) (Kind, error) {
	for k := KindToolCall; k < kindEnd; k++ {
		if kindNames[k] == s {
			return k, nil
		}
	}
	return kindInvalid, checkfu.Refuse(CodeEventInvalid, "eventlog: %s is not an event kind", checkfu.Quote(s))
}

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool { return k > kindInvalid && k < kindEnd }

// String returns the snake_case name of k, or "kind(N)" when k is invalid.
func (k Kind) String() string {
	if !k.Valid() {
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
	return kindNames[k]
}

// MarshalText implements encoding.TextMarshaler; it refuses invalid kinds.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, checkfu.Refuse(CodeEventInvalid, "eventlog: kind(%d) is not an event kind", uint8(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with [ParseKind].
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// A Decision is the authority's verdict recorded on an event. The zero
// Decision, DecisionNone, means the event records no decision; it is never
// read as an allow.
type Decision uint8

const (
	// DecisionNone means the event carries no authority decision.
	DecisionNone Decision = iota
	// DecisionAllow means the authority permitted the action.
	DecisionAllow
	// DecisionDeny means the authority refused the action.
	DecisionDeny
	decisionEnd
)

var decisionNames = [...]string{DecisionNone: "none", DecisionAllow: "allow", DecisionDeny: "deny"}

// Valid reports whether d is one of the defined decisions.
func (d Decision) Valid() bool { return d < decisionEnd }

// String returns "none", "allow" or "deny", or "decision(N)".
func (d Decision) String() string {
	if !d.Valid() {
		return fmt.Sprintf("decision(%d)", uint8(d))
	}
	return decisionNames[d]
}

// MarshalText implements encoding.TextMarshaler; it refuses invalid values.
func (d Decision) MarshalText() ([]byte, error) {
	if !d.Valid() {
		return nil, checkfu.Refuse(CodeEventInvalid, "eventlog: decision(%d) is not a decision", uint8(d))
	}
	return []byte(decisionNames[d]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler: exactly "none",
// "allow" or "deny".
func (d *Decision) UnmarshalText(b []byte) error {
	for v, name := range decisionNames {
		if string(b) == name {
			*d = Decision(v)
			return nil
		}
	}
	return checkfu.Refuse(CodeEventInvalid, "eventlog: %s is not a decision (want none, allow or deny)", checkfu.Quote(string(b)))
}

// A ProfileRevision names one exact revision of a SandboxProfile.
type ProfileRevision struct {
	Profile  string `json:"profile"`
	Revision string `json:"revision"`
}

// A ToolDescriptor names the canonical tool descriptor an event is about.
type ToolDescriptor struct {
	Name     string `json:"name"`
	Revision string `json:"revision"`
}

// An Event is one fact appended to a session log. Every field but Content
// is an envelope field: an identifier, code or revision that is stored
// durably, hashed into the chain and kept for the life of the log. Envelope
// strings are identifiers (see [Event.Validate]), so free text such as an
// error message cannot ride in them.
//
// Content is the execution content of the event (tool arguments, outputs,
// error strings). It never enters the envelope: the log seals it under its
// own data key, or, in a zero-data-retention log, keeps only a keyed digest
// of it. An Event holds no secret and no private continuation state.
type Event struct {
	Kind Kind
	// Time is when the event happened; the log sets it when zero. It is
	// kept with nanosecond precision in UTC.
	Time time.Time
	// Label says whether the evidence this event records came from a mock,
	// an isolated provider or production. The zero Label is mock.
	Label checkfu.Label

	// RequestID, RunID and Actor, and Role, Tenant, Workspace, Project
	// and SessionID, are the request context the event belongs to
	// (checkfu.RequestContext: its Request, Run, Actor, Role, Tenant,
	// Workspace, Project and Session). SessionID is the session of that
	// context, which need not be the session of the log the event is
	// stored in. An event with no Actor and no other context field is
	// one no authenticated context stands behind (such as a call on a
	// channel the gateway never opened): the log never invents an actor
	// for it.
	RequestID string
	RunID     string
	Actor     string
	Role      string
	Tenant    string
	Workspace string
	Project   string
	SessionID string
	// Channel names the gateway channel the event's call came through:
	// one agent process's own route to its tools, opened for it and
	// closed with it (custody/pipeline's Channel.ID). An event the plane
	// recorded about that agent (its process, its turns, its refused
	// permissions) names it too, so a reader puts each call in its
	// agent's window by name, not by time. Empty for an event no channel
	// stands behind.
	Channel string

	// Decision and Code are the authority decision and its stable code,
	// such as deny / "no_rule_matched".
	Decision Decision
	Code     string

	Profile  ProfileRevision
	Provider checkfu.ProviderRevision
	Tool     ToolDescriptor

	// ApprovalID names an action-bound approval. Approver, Grant,
	// Action (the digest of the canonical action), EffectClass (such as
	// "read_only" or "external_effect") and Scope are what it binds.
	ApprovalID  string
	Approver    string
	Grant       string
	Action      string
	EffectClass string
	Scope       string
	EffectID    string
	ProcessID   string
	// Result is the terminal result code of what the event records, such
	// as "ok", "exit_1" or "timeout".
	Result string
	// Release is the release identity of the software that produced the
	// event.
	Release string

	// Content is execution content; see the type documentation. It is
	// never part of the envelope.
	Content []byte
}

// MaxIdentifier is the longest envelope string, in bytes.
const MaxIdentifier = 256

// MaxContent is the largest Content an event may carry, in bytes.
const MaxContent = 1 << 20

// identFields lists the envelope strings of e in their fixed order, with
// their names for error messages. The first [v1Fields] are the fields of
// an envelope of version 1; version 2 appends the rest of the request
// context ([v2Fields] in all); version 3 appends the channel.
func (e *Event) identFields() [26]struct {
	name string
	v    *string
} {
	return [...]struct {
		name string
		v    *string
	}{
		{"request_id", &e.RequestID},
		{"run_id", &e.RunID},
		{"actor", &e.Actor},
		{"code", &e.Code},
		{"profile.profile", &e.Profile.Profile},
		{"profile.revision", &e.Profile.Revision},
		{"provider.provider", &e.Provider.Provider},
		{"provider.revision", &e.Provider.Revision},
		{"tool.name", &e.Tool.Name},
		{"tool.revision", &e.Tool.Revision},
		{"approval_id", &e.ApprovalID},
		{"approver", &e.Approver},
		{"grant", &e.Grant},
		{"action", &e.Action},
		{"effect_class", &e.EffectClass},
		{"scope", &e.Scope},
		{"effect_id", &e.EffectID},
		{"process_id", &e.ProcessID},
		{"result", &e.Result},
		{"release", &e.Release},
		{"role", &e.Role},
		{"tenant", &e.Tenant},
		{"workspace", &e.Workspace},
		{"project", &e.Project},
		{"session_id", &e.SessionID},
		{"channel", &e.Channel},
	}
}

// v1Fields is how many of [Event.identFields] an envelope of version 1
// holds: every field up to release.
const v1Fields = 20

// v2Fields is how many of [Event.identFields] an envelope of version 2
// holds: every field up to session_id.
const v2Fields = 25

// Validate reports why e cannot be appended, as a refusal with code
// [CodeEventInvalid], or nil. The kind, label and decision must be defined
// values; every envelope string must be empty or an identifier of at most
// [MaxIdentifier] bytes drawn from ASCII letters, digits and "._:@/+-=";
// Content must be at most [MaxContent] bytes.
func (e *Event) Validate() error {
	if !e.Kind.Valid() {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: event has no valid kind (got %v)", e.Kind)
	}
	if !e.Label.Valid() {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: event label %v is not an evidence label", e.Label)
	}
	if !e.Decision.Valid() {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: event decision %v is not a decision", e.Decision)
	}
	if !e.Time.IsZero() && (e.Time.Before(minTime) || e.Time.After(maxTime)) {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: event time %s is outside 1970..2262", e.Time.Format(time.RFC3339))
	}
	for _, f := range e.identFields() {
		if err := checkIdent(f.name, *f.v); err != nil {
			return err
		}
	}
	if len(e.Content) > MaxContent {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: content is %d bytes, more than the %d allowed", len(e.Content), MaxContent)
	}
	return nil
}

// checkIdent refuses s unless it is empty or an identifier. The offending
// value is not quoted back in full: a field that fails here may be holding
// content that belongs in Content, so the message names only the field and
// the position.
func checkIdent(field, s string) error {
	if len(s) > MaxIdentifier {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: %s is %d bytes, more than the %d allowed for an identifier", field, len(s), MaxIdentifier)
	}
	for i := 0; i < len(s); i++ {
		if !identByte(s[i]) {
			return checkfu.Refuse(CodeEventInvalid, "eventlog: %s has a byte at offset %d that an identifier may not hold (allowed: ASCII letters, digits and ._:@/+-=); put free text in content", field, i)
		}
	}
	return nil
}

func identByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '.', '_', ':', '@', '/', '+', '-', '=':
		return true
	}
	return false
}

// CheckSession returns nil when id can name a session, else a refusal
// with [CodeSessionInvalid].
func CheckSession(id string) error {
	if id == "" {
		return checkfu.Refuse(CodeSessionInvalid, "eventlog: empty session id")
	}
	if err := checkIdent("session id", id); err != nil {
		// An id may come from an untrusted peer and be of any length.
		return checkfu.Refuse(CodeSessionInvalid, "eventlog: session id %s is not an identifier (ASCII letters, digits and ._:@/+-=, at most %d bytes)", checkfu.Quote(id), MaxIdentifier)
	}
	return nil
}
