package eventlog

import (
	"bytes"
	"encoding/gob"
	"encoding/xml"
	"fmt"
	"log/slog"
	"strings"
)

// Content is execution content, and the log is not the only place an
// integrator hands an Event: fmt, fmt.Errorf, slog and gob all reach it.
// Each of them goes through a method below that prints or encodes the
// envelope fields and leaves Content out, as custody's Secret prints
// "[redacted]". One path cannot be closed from here: fmt prints an Event
// held in an unexported field of another struct by reflection, without
// calling its methods; keep events in exported fields or pass them
// directly.

// eventView is Event without its methods, so that fmt prints its fields.
// Its Content is always nil.
type eventView Event

func viewOf(e *Event) eventView {
	v := eventView(*e)
	v.Content = nil
	return v
}

// Format implements fmt.Formatter: every verb prints the event as fmt
// would print the struct, with Content nil. %#v prints
// "eventlog.Event{...}".
func (e Event) Format(f fmt.State, verb rune) {
	v := viewOf(&e)
	if verb == 'v' && f.Flag('#') {
		s := fmt.Sprintf("%#v", v)
		_, _ = f.Write([]byte("eventlog.Event" + strings.TrimPrefix(s, "eventlog.eventView")))
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), v)
}

// LogValue implements slog.LogValuer: an event logs as a group of its
// kind, time, label, decision and non-empty identifier fields, never its
// content.
func (e Event) LogValue() slog.Value { return slog.GroupValue(e.logAttrs()...) }

func (e *Event) logAttrs() []slog.Attr {
	attrs := []slog.Attr{slog.String("kind", e.Kind.String())}
	if !e.Time.IsZero() {
		attrs = append(attrs, slog.Time("time", e.Time))
	}
	attrs = append(attrs, slog.String("label", e.Label.String()))
	if e.Decision != DecisionNone {
		attrs = append(attrs, slog.String("decision", e.Decision.String()))
	}
	for _, f := range e.identFields() {
		if *f.v != "" {
			attrs = append(attrs, slog.String(f.name, *f.v))
		}
	}
	return attrs
}

// GobEncode implements gob.GobEncoder: it encodes the envelope fields,
// never the content. A decoded event has no Content.
func (e Event) GobEncode() ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(viewOf(&e)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// GobDecode implements gob.GobDecoder for what [Event.GobEncode] wrote;
// the event has no Content.
func (e *Event) GobDecode(b []byte) error {
	var v eventView
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&v); err != nil {
		return err
	}
	v.Content = nil
	*e = Event(v)
	return nil
}

// entryView is Entry with its Event as a named field, so that fmt and
// gob see every field of the entry, not only the methods Event promotes.
type entryView struct {
	Session       string
	Seq           uint64
	Hash          Hash
	Prev          Hash
	Event         Event
	ContentMode   ContentMode
	ContentDigest Hash
	Shredded      bool
	ShredOf       uint64
}

func (e *Entry) view() entryView {
	return entryView{e.Session, e.Seq, e.Hash, e.Prev, e.Event, e.ContentMode, e.ContentDigest, e.Shredded, e.ShredOf}
}

// Format implements fmt.Formatter: the entry prints as fmt would print
// its fields, its Event through [Event.Format] (so without content).
func (e Entry) Format(f fmt.State, verb rune) {
	v := e.view()
	if verb == 'v' && f.Flag('#') {
		s := fmt.Sprintf("%#v", v)
		_, _ = f.Write([]byte("eventlog.Entry" + strings.TrimPrefix(s, "eventlog.entryView")))
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), v)
}

// LogValue implements slog.LogValuer: session, seq, hash and content
// mode, then the event's attributes of [Event.LogValue].
func (e Entry) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("session", e.Session), slog.Uint64("seq", e.Seq), slog.String("hash", e.Hash.String()),
		slog.String("content_mode", e.ContentMode.String()),
	}
	if e.Shredded {
		attrs = append(attrs, slog.Bool("shredded", true))
	}
	if e.ShredOf != 0 {
		attrs = append(attrs, slog.Uint64("shred_of", e.ShredOf))
	}
	return slog.GroupValue(append(attrs, e.Event.logAttrs()...)...)
}

// GobEncode implements gob.GobEncoder: every field of the entry, its
// Event through [Event.GobEncode].
func (e Entry) GobEncode() ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(e.view()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// GobDecode implements gob.GobDecoder for what [Entry.GobEncode] wrote.
func (e *Entry) GobDecode(b []byte) error {
	var v entryView
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&v); err != nil {
		return err
	}
	*e = Entry{Session: v.Session, Seq: v.Seq, Hash: v.Hash, Prev: v.Prev, Event: v.Event,
		ContentMode: v.ContentMode, ContentDigest: v.ContentDigest, Shredded: v.Shredded, ShredOf: v.ShredOf}
	return nil
}

// MarshalXML implements xml.Marshaler: the envelope fields, as
// encoding/xml would write the struct, with Content empty.
func (e Event) MarshalXML(enc *xml.Encoder, start xml.StartElement) error {
	return enc.EncodeElement(viewOf(&e), start)
}

// MarshalXML implements xml.Marshaler: every field of the entry, its
// Event through [Event.MarshalXML].
func (e Entry) MarshalXML(enc *xml.Encoder, start xml.StartElement) error {
	return enc.EncodeElement(e.view(), start)
}

// A Record's DataKey and Sealed are the only copy of an event's wrapped
// data key and ciphertext: a copy in a log file would outlive
// [Log.Shred]. fmt and slog print their lengths only.

// sealedBytes prints as "nil" or "(N bytes)".
type sealedBytes struct{ b []byte }

func (s sealedBytes) Format(f fmt.State, _ rune) {
	if s.b == nil {
		_, _ = f.Write([]byte("nil"))
		return
	}
	fmt.Fprintf(f, "(%d bytes)", len(s.b))
}

// recordView is Record with DataKey and Sealed as their lengths.
type recordView struct {
	Seq        uint64
	Envelope   []byte
	Hash       Hash
	DataKey    sealedBytes
	Sealed     sealedBytes
	ShreddedBy uint64
}

// Format implements fmt.Formatter: every verb prints the record as fmt
// would print the struct, with DataKey and Sealed as their lengths.
func (r Record) Format(f fmt.State, verb rune) {
	v := recordView{r.Seq, r.Envelope, r.Hash, sealedBytes{r.DataKey}, sealedBytes{r.Sealed}, r.ShreddedBy}
	if verb == 'v' && f.Flag('#') {
		s := fmt.Sprintf("%#v", v)
		_, _ = f.Write([]byte("eventlog.Record" + strings.TrimPrefix(s, "eventlog.recordView")))
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), v)
}

// LogValue implements slog.LogValuer: seq, hash, shredded_by and the
// lengths of the envelope, data key and sealed content.
func (r Record) LogValue() slog.Value {
	return slog.GroupValue(slog.Uint64("seq", r.Seq), slog.String("hash", r.Hash.String()),
		slog.Int("envelope_bytes", len(r.Envelope)), slog.Int("data_key_bytes", len(r.DataKey)),
		slog.Int("sealed_bytes", len(r.Sealed)), slog.Uint64("shredded_by", r.ShreddedBy))
}
