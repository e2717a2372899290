package eventlog

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// The JSON form of events is for input and display; the chain is built
// over the binary envelope, never over JSON.

type wireProfile struct {
	Profile  string `json:"profile"`
	Revision string `json:"revision"`
}

type wireProvider struct {
	Provider string `json:"provider"`
	Revision string `json:"revision"`
}

type wireTool struct {
	Name     string `json:"name"`
	Revision string `json:"revision"`
}

type wireEvent struct {
	Kind       Kind          `json:"kind"`
	Time       *time.Time    `json:"time,omitempty"`
	Label      checkfu.Label `json:"label"`
	RequestID  string        `json:"request_id,omitempty"`
	RunID      string        `json:"run_id,omitempty"`
	Actor      string        `json:"actor,omitempty"`
	Role       string        `json:"role,omitempty"`
	Tenant     string        `json:"tenant,omitempty"`
	Workspace  string        `json:"workspace,omitempty"`
	Project    string        `json:"project,omitempty"`
	SessionID  string        `json:"session_id,omitempty"`
	Channel    string        `json:"channel,omitempty"`
	Decision   *Decision     `json:"decision,omitempty"`
	Code       string        `json:"code,omitempty"`
	Profile    *wireProfile  `json:"profile,omitempty"`
	Provider   *wireProvider `json:"provider,omitempty"`
	Tool       *wireTool     `json:"tool,omitempty"`
	ApprovalID string        `json:"approval_id,omitempty"`
	Approver   string        `json:"approver,omitempty"`
	Grant      string        `json:"grant,omitempty"`
	Action     string        `json:"action,omitempty"`
	Effect     string        `json:"effect_class,omitempty"`
	Scope      string        `json:"scope,omitempty"`
	EffectID   string        `json:"effect_id,omitempty"`
	ProcessID  string        `json:"process_id,omitempty"`
	Result     string        `json:"result,omitempty"`
	Release    string        `json:"release,omitempty"`
	Content    *string       `json:"content,omitempty"`
}

// inEvent is the JSON form of an event as DecodeEvent reads it: every
// scalar a string, parsed here, so that no decoder error quotes a value.
type inEvent struct {
	Kind       string        `json:"kind"`
	Time       *string       `json:"time"`
	Label      *string       `json:"label"`
	RequestID  string        `json:"request_id"`
	RunID      string        `json:"run_id"`
	Actor      string        `json:"actor"`
	Role       string        `json:"role"`
	Tenant     string        `json:"tenant"`
	Workspace  string        `json:"workspace"`
	Project    string        `json:"project"`
	SessionID  string        `json:"session_id"`
	Channel    string        `json:"channel"`
	Decision   *string       `json:"decision"`
	Code       string        `json:"code"`
	Profile    *wireProfile  `json:"profile"`
	Provider   *wireProvider `json:"provider"`
	Tool       *wireTool     `json:"tool"`
	ApprovalID string        `json:"approval_id"`
	Approver   string        `json:"approver"`
	Grant      string        `json:"grant"`
	Action     string        `json:"action"`
	Effect     string        `json:"effect_class"`
	Scope      string        `json:"scope"`
	EffectID   string        `json:"effect_id"`
	ProcessID  string        `json:"process_id"`
	Result     string        `json:"result"`
	Release    string        `json:"release"`
	Content    *string       `json:"content"`
}

// jsonOptions bound an event's JSON: the event object and the revision
// objects in it (depth 2), and MaxContent of content escaped as \uXXXX
// (6 bytes a byte) plus the envelope fields.
var jsonOptions = strictjson.Options{MaxDepth: 2, MaxBytes: 6*MaxContent + 64<<10}

// DecodeEvent parses one event from its JSON form, strictly, through
// internal/strictjson: one object, exactly the documented keys
// (case-sensitive, none twice, at any depth), no trailing data, valid
// UTF-8, bounded depth and size, and an event that passes
// [Event.Validate]. "content" is a string of text; it becomes
// Event.Content. Errors are refusals with [CodeEventInvalid] and never
// quote content.
func DecodeEvent(data []byte) (Event, error) {
	bad := func(format string, args ...any) (Event, error) {
		return Event{}, checkfu.Refuse(CodeEventInvalid, "eventlog: event JSON: "+format, args...)
	}
	var w inEvent
	if err := strictjson.Unmarshal(data, &w, jsonOptions); err != nil {
		var se *strictjson.Error
		if !errors.As(err, &se) {
			return bad("does not decode")
		}
		if se.Kind == strictjson.KindType && se.Path == "" {
			return bad("not a JSON object")
		}
		return Event{}, &checkfu.Refusal{Code: CodeEventInvalid, Message: "eventlog: event JSON", Err: se}
	}
	if w.Kind == "" {
		return bad("kind is missing")
	}
	kind, err := ParseKind(w.Kind)
	if err != nil {
		return Event{}, err
	}
	ev := Event{
		Kind: kind, RequestID: w.RequestID, RunID: w.RunID, Actor: w.Actor,
		Role: w.Role, Tenant: w.Tenant, Workspace: w.Workspace, Project: w.Project, SessionID: w.SessionID,
		Channel: w.Channel,
		Code:    w.Code, ApprovalID: w.ApprovalID, Approver: w.Approver, Grant: w.Grant, Action: w.Action,
		EffectClass: w.Effect, Scope: w.Scope, EffectID: w.EffectID, ProcessID: w.ProcessID,
		Result: w.Result, Release: w.Release,
	}
	if w.Label != nil {
		if ev.Label, err = checkfu.ParseLabel(*w.Label); err != nil {
			return Event{}, &checkfu.Refusal{Code: CodeEventInvalid, Message: "eventlog: event JSON: label", Err: err}
		}
	}
	if w.Time != nil {
		var t time.Time
		if t.UnmarshalText([]byte(*w.Time)) != nil {
			return bad("time is not an RFC 3339 time")
		}
		if t.IsZero() {
			return bad("time is the zero time; omit it instead")
		}
		ev.Time = t.UTC()
	}
	if w.Decision != nil {
		if err := ev.Decision.UnmarshalText([]byte(*w.Decision)); err != nil {
			return Event{}, err
		}
	}
	if w.Profile != nil {
		ev.Profile = ProfileRevision{w.Profile.Profile, w.Profile.Revision}
	}
	if w.Provider != nil {
		ev.Provider = checkfu.ProviderRevision{Provider: w.Provider.Provider, Revision: w.Provider.Revision}
	}
	if w.Tool != nil {
		ev.Tool = ToolDescriptor{w.Tool.Name, w.Tool.Revision}
	}
	if w.Content != nil {
		if *w.Content == "" {
			return bad("content is empty; omit it instead")
		}
		ev.Content = []byte(*w.Content)
	}
	if err := ev.Validate(); err != nil {
		return Event{}, err
	}
	return ev, nil
}

func toWire(ev *Event) wireEvent {
	w := wireEvent{
		Kind: ev.Kind, Label: ev.Label, RequestID: ev.RequestID, RunID: ev.RunID, Actor: ev.Actor,
		Role: ev.Role, Tenant: ev.Tenant, Workspace: ev.Workspace, Project: ev.Project, SessionID: ev.SessionID,
		Channel: ev.Channel,
		Code:    ev.Code, ApprovalID: ev.ApprovalID, Approver: ev.Approver, Grant: ev.Grant, Action: ev.Action,
		Effect: ev.EffectClass, Scope: ev.Scope, EffectID: ev.EffectID, ProcessID: ev.ProcessID,
		Result: ev.Result, Release: ev.Release,
	}
	if !ev.Time.IsZero() {
		t := ev.Time.UTC()
		w.Time = &t
	}
	if ev.Decision != DecisionNone {
		d := ev.Decision
		w.Decision = &d
	}
	if ev.Profile != (ProfileRevision{}) {
		w.Profile = &wireProfile{ev.Profile.Profile, ev.Profile.Revision}
	}
	if ev.Provider != (checkfu.ProviderRevision{}) {
		w.Provider = &wireProvider{ev.Provider.Provider, ev.Provider.Revision}
	}
	if ev.Tool != (ToolDescriptor{}) {
		w.Tool = &wireTool{ev.Tool.Name, ev.Tool.Revision}
	}
	return w
}

// MarshalJSON encodes e in the form [DecodeEvent] reads, without its
// content: content never appears in JSON output.
func (e Event) MarshalJSON() ([]byte, error) { return json.Marshal(toWire(&e)) }

type wireEntry struct {
	Session string `json:"session"`
	Seq     uint64 `json:"seq"`
	Hash    Hash   `json:"hash"`
	Prev    Hash   `json:"prev"`
	wireEvent
	ContentMode   ContentMode `json:"content_mode"`
	ContentDigest *Hash       `json:"content_digest,omitempty"`
	Shredded      bool        `json:"shredded,omitempty"`
	ShredOf       uint64      `json:"shred_of,omitempty"`
}

// MarshalJSON encodes e as one JSON object: the event fields of
// [Event.MarshalJSON] plus session, seq, hash, prev and content_mode, and
// content_digest, "shredded": true and shred_of only when they apply (an
// event without content has no digest; shredded is left out while the
// content is kept; shred_of is the seq a shred event shredded).
func (e Entry) MarshalJSON() ([]byte, error) {
	w := wireEntry{Session: e.Session, Seq: e.Seq, Hash: e.Hash, Prev: e.Prev, wireEvent: toWire(&e.Event),
		ContentMode: e.ContentMode, Shredded: e.Shredded, ShredOf: e.ShredOf}
	if e.ContentMode != ContentNone {
		d := e.ContentDigest
		w.ContentDigest = &d
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes e with [DecodeEvent].
func (e *Event) UnmarshalJSON(data []byte) error {
	ev, err := DecodeEvent(data)
	if err != nil {
		return err
	}
	*e = ev
	return nil
}
