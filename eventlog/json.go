package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"time"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
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

// A shape lists the keys a JSON object may hold; a nil shape is a scalar.
type shape map[string]shape

var (
	revShape   = func(a, b string) shape { return shape{a: nil, b: nil} }
	eventShape = shape{
		"kind": nil, "time": nil, "label": nil, "request_id": nil, "run_id": nil, "actor": nil,
		"decision": nil, "code": nil, "profile": revShape("profile", "revision"),
		"provider": revShape("provider", "revision"), "tool": revShape("name", "revision"),
		"approval_id": nil, "approver": nil, "grant": nil, "action": nil, "effect_class": nil, "scope": nil,
		"effect_id": nil, "process_id": nil, "result": nil, "release": nil,
		"content": nil,
	}
)

// DecodeEvent parses one event from its JSON form, strictly: one object,
// exactly the documented keys (case-sensitive, none twice), no trailing
// data, valid UTF-8, and an event that passes [Event.Validate]. "content"
// is a string of text; it becomes Event.Content. Errors are refusals with
// [CodeEventInvalid] and never quote content.
func DecodeEvent(data []byte) (Event, error) {
	bad := func(format string, args ...any) (Event, error) {
		return Event{}, checkfu.Refuse(CodeEventInvalid, "eventlog: event JSON: "+format, args...)
	}
	if !utf8.Valid(data) {
		return bad("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := checkShape(dec, eventShape, ""); err != nil {
		return bad("%v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad("trailing data after the event object")
	}
	var w wireEvent
	if err := json.Unmarshal(data, &w); err != nil {
		var r *checkfu.Refusal
		if errors.As(err, &r) {
			if r.Code == CodeEventInvalid {
				return Event{}, r
			}
			return Event{}, &checkfu.Refusal{Code: CodeEventInvalid, Message: "eventlog: event JSON", Err: r}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return bad("field %q has the wrong type (want %s)", te.Field, te.Type)
		}
		return bad("does not decode")
	}
	ev := Event{
		Kind: w.Kind, Label: w.Label, RequestID: w.RequestID, RunID: w.RunID, Actor: w.Actor,
		Code: w.Code, ApprovalID: w.ApprovalID, Approver: w.Approver, Grant: w.Grant, Action: w.Action,
		EffectClass: w.Effect, Scope: w.Scope, EffectID: w.EffectID, ProcessID: w.ProcessID,
		Result: w.Result, Release: w.Release,
	}
	if w.Time != nil {
		if w.Time.IsZero() {
			return bad("time is the zero time; omit it instead")
		}
		ev.Time = w.Time.UTC()
	}
	if w.Decision != nil {
		ev.Decision = *w.Decision
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

// checkShape reads one JSON value from dec and refuses objects whose keys
// are not in s, duplicate keys, and objects where s expects a scalar.
func checkShape(dec *json.Decoder, s shape, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return errors.New("malformed JSON")
	}
	d, isDelim := tok.(json.Delim)
	if s == nil {
		if isDelim {
			return errors.New("field " + quote(path) + " must be a string, not an object or array")
		}
		return nil
	}
	if !isDelim || d != '{' {
		if path == "" {
			return errors.New("not a JSON object")
		}
		return errors.New("field " + quote(path) + " must be an object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errors.New("malformed JSON")
		}
		key := tok.(string)
		name := key
		if path != "" {
			name = path + "." + key
		}
		sub, ok := s[key]
		if !ok {
			return errors.New("unknown field " + quote(name))
		}
		if seen[key] {
			return errors.New("field " + quote(name) + " appears twice")
		}
		seen[key] = true
		if err := checkShape(dec, sub, name); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return errors.New("malformed JSON")
	}
	return nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func toWire(ev *Event) wireEvent {
	w := wireEvent{
		Kind: ev.Kind, Label: ev.Label, RequestID: ev.RequestID, RunID: ev.RunID, Actor: ev.Actor,
		Code: ev.Code, ApprovalID: ev.ApprovalID, Approver: ev.Approver, Grant: ev.Grant, Action: ev.Action,
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
