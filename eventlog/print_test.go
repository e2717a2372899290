package eventlog_test

import (
	"bytes"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

// printCanary is event content an integrator might log by accident.
const printCanary = "CANARY-tool-arguments-7f3a"

// canaryForms are the ways fmt, slog and gob can render the canary: the
// text itself, its hex (%x), and its decimal byte list (%v of a []byte).
func canaryForms() []string {
	b := []byte(printCanary)
	dec := strings.Trim(fmt.Sprint(b[:8]), "[]")
	return []string{printCanary, hex.EncodeToString(b[:8]), strings.ToUpper(hex.EncodeToString(b[:8])), dec}
}

func assertNoContent(t *testing.T, where string, out []byte) {
	t.Helper()
	for _, f := range canaryForms() {
		if bytes.Contains(out, []byte(f)) {
			t.Errorf("%s prints the event's content (form %q): %q", where, f, out)
		}
	}
}

// An Exported holder: fmt reaches an Event in an exported field through
// its methods.
type eventHolder struct {
	Event eventlog.Event
	Ptr   *eventlog.Event
	List  []eventlog.Event
	Entry eventlog.Entry
}

func contentEvent() eventlog.Event {
	return eventlogtest.Sample(eventlog.KindToolCall, 1, printCanary)
}

// TestEventFmtOmitsContent prints an Event with content through every
// fmt verb, through fmt.Errorf, and inside slices, pointers and exported
// struct fields: the content appears in none of them, and the envelope
// fields still do.
//
// Finding 19: before Event had a Format method, %v and %s printed the
// content's bytes.
func TestEventFmtOmitsContent(t *testing.T) {
	ev := contentEvent()
	entry := eventlog.Entry{Session: "s", Seq: 3, Event: ev}
	h := eventHolder{Event: ev, Ptr: &ev, List: []eventlog.Event{ev}, Entry: entry}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3v"} {
		for name, arg := range map[string]any{"Event": ev, "*Event": &ev, "[]Event": []eventlog.Event{ev}, "holder": h, "Entry": entry, "*Entry": &entry} {
			assertNoContent(t, fmt.Sprintf("Sprintf(%s, %s)", verb, name), []byte(fmt.Sprintf(verb, arg)))
		}
	}
	assertNoContent(t, "fmt.Errorf(%v)", []byte(fmt.Errorf("append %v: %w", ev, errBoom).Error()))
	assertNoContent(t, "fmt.Errorf(%+v)", []byte(fmt.Errorf("append %+v", &ev).Error()))
	assertNoContent(t, "fmt.Sprint", []byte(fmt.Sprint(ev, &ev, entry)))
	assertNoContent(t, "fmt.Sprintln", []byte(fmt.Sprintln(ev, &ev, entry)))

	for verb, want := range map[string]string{
		"%v":  "github.create_issue",
		"%+v": "Actor:agent:test",
		"%#v": "eventlog.Event{",
		"%s":  "agent:test",
	} {
		if got := fmt.Sprintf(verb, ev); !strings.Contains(got, want) {
			t.Errorf("Sprintf(%s, ev) = %q, want it to show the envelope (%q)", verb, got, want)
		}
	}
	if got := fmt.Sprintf("%+v", entry); !strings.Contains(got, "Seq:3") || !strings.Contains(got, "Session:s") || !strings.Contains(got, "agent:test") {
		t.Errorf("Sprintf(%%+v, entry) = %q, want the session, seq and envelope", got)
	}
	if ev.Content == nil || string(ev.Content) != printCanary {
		t.Error("formatting changed the event's Content")
	}
}

var errBoom = fmt.Errorf("boom")

// TestEventSlogOmitsContent logs an Event and an Entry through slog's
// text and JSON handlers, as a value, a pointer and inside a group.
func TestEventSlogOmitsContent(t *testing.T) {
	ev := contentEvent()
	entry := eventlog.Entry{Session: "s", Seq: 3, Event: ev}
	for _, mk := range []struct {
		name string
		new  func(*bytes.Buffer) slog.Handler
	}{
		{"text", func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) }},
		{"json", func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) }},
	} {
		var buf bytes.Buffer
		log := slog.New(mk.new(&buf))
		log.Info("appending", "event", ev, "ptr", &ev, "entry", entry, "entry_ptr", &entry)
		log.Info("grouped", slog.Group("g", "event", ev))
		log.Info("any", slog.Any("event", ev))
		assertNoContent(t, mk.name+" handler", buf.Bytes())
		for _, want := range []string{"github.create_issue", "agent:test", "tool_call"} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%s handler output lacks %q: the log shows nothing of the event:\n%s", mk.name, want, buf.String())
			}
		}
		if !strings.Contains(buf.String(), "seq") {
			t.Errorf("%s handler output lacks the entry's seq:\n%s", mk.name, buf.String())
		}
	}
}

// TestEventGobOmitsContent gob-encodes an Event, a pointer to one, an
// Entry and a struct holding them: the stream holds no content, and
// decoding gives back the envelope with no content.
func TestEventGobOmitsContent(t *testing.T) {
	ev := contentEvent()
	entry := eventlog.Entry{Session: "s", Seq: 3, Event: ev, ContentMode: eventlog.ContentSealed}
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	for _, v := range []any{ev, &ev, entry, eventHolder{Event: ev, Ptr: &ev, List: []eventlog.Event{ev}, Entry: entry}} {
		if err := enc.Encode(v); err != nil {
			t.Fatalf("gob Encode(%T): %v", v, err)
		}
	}
	assertNoContent(t, "gob", buf.Bytes())
	dec := gob.NewDecoder(&buf)
	var got eventlog.Event
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := ev
	want.Content = nil
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) || got.Content != nil || !got.Time.Equal(ev.Time) {
		t.Errorf("gob round trip = %+v, want %+v without content", got, want)
	}
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	var gotEntry eventlog.Entry
	if err := dec.Decode(&gotEntry); err != nil {
		t.Fatal(err)
	}
	if gotEntry.Session != "s" || gotEntry.Seq != 3 || gotEntry.ContentMode != eventlog.ContentSealed || gotEntry.Actor != ev.Actor || gotEntry.Content != nil {
		t.Errorf("gob round trip of an Entry = %+v", gotEntry)
	}
}
