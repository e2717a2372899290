package eventlog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

func TestDecodeEventErrors(t *testing.T) {
	tests := []struct{ in, msg string }{
		{`[]`, "refused: event_invalid: eventlog: event JSON: not a JSON object"},
		{`{"kind":"denial","Kind":"skip"}`, `refused: event_invalid: eventlog: event JSON: json: unknown member "Kind" (names are case-sensitive) at top level (offset 17)`},
		{`{"kind":"denial","kind":"skip"}`, `refused: event_invalid: eventlog: event JSON: json: member "kind" appears twice at top level (offset 17)`},
		{`{"kind":"denial","tool":{"name":"a","digest":"b"}}`, `refused: event_invalid: eventlog: event JSON: json: unknown member "digest" (names are case-sensitive) at .tool (offset 36)`},
		{`{"kind":"denial","tool":"gh"}`, `refused: event_invalid: eventlog: event JSON: json: a JSON string where eventlog.wireTool belongs at .tool (offset 28)`},
		{`{"kind":{"x":1}}`, `refused: event_invalid: eventlog: event JSON: json: a JSON object where string belongs at .kind (offset 9)`},
		{`{"kind":"denial"}{}`, "refused: event_invalid: eventlog: event JSON: json: data after the JSON value at top level (offset 17)"},
		{`{"kind":"denial"`, "refused: event_invalid: eventlog: event JSON: json: unexpected end of JSON at top level (offset 16)"},
		{`{"kind":"nope"}`, `refused: event_invalid: eventlog: "nope" is not an event kind`},
		{`{"kind":"denial","label":"real"}`, `refused: event_invalid: eventlog: event JSON: label: refused: label_invalid: "real" is not an evidence label (want mock, isolated or production)`},
		{`{"kind":"denial","seq":3}`, `refused: event_invalid: eventlog: event JSON: json: unknown member "seq" (names are case-sensitive) at top level (offset 17)`},
		{`{"kind":"denial","actor":7}`, `refused: event_invalid: eventlog: event JSON: json: a JSON number where string belongs at .actor (offset 26)`},
		{`{"kind":"denial","content":""}`, "refused: event_invalid: eventlog: event JSON: content is empty; omit it instead"},
		{`{"kind":"denial","time":"0001-01-01T00:00:00Z"}`, "refused: event_invalid: eventlog: event JSON: time is the zero time; omit it instead"},
		{"{\"kind\":\"denial\",\"content\":\"\xff\"}", "refused: event_invalid: eventlog: event JSON: json: invalid UTF-8 at top level (offset 28)"},
		{`{}`, "refused: event_invalid: eventlog: event JSON: kind is missing"},
		{`{"kind":"denial","time":"yesterday"}`, "refused: event_invalid: eventlog: event JSON: time is not an RFC 3339 time"},
		{`{"kind":"denial","tool":{"name":{"a":1}}}`, "refused: event_invalid: eventlog: event JSON: json: nested deeper than 2 at .tool.name (offset 32)"},
	}
	for _, tt := range tests {
		_, err := eventlog.DecodeEvent([]byte(tt.in))
		if !errors.Is(err, eventlog.CodeEventInvalid) {
			t.Errorf("DecodeEvent(%q) = %v, want event_invalid", tt.in, err)
		}
		if err == nil || err.Error() != tt.msg {
			t.Errorf("DecodeEvent(%q) error\n got %v\nwant %s", tt.in, err, tt.msg)
		}
	}
}

func TestEventJSONRoundTrip(t *testing.T) {
	ev := eventlogtest.Sample(eventlog.KindApprovalResult, 5, "")
	ev.ApprovalID, ev.EffectID, ev.ProcessID = "apr-1", "eff-2", "proc-3"
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eventlog.DecodeEvent(b)
	if err != nil {
		t.Fatalf("DecodeEvent(%s): %v", b, err)
	}
	if diff := cmp.Diff(ev, got); diff != "" {
		t.Errorf("round trip through %s (-want +got):\n%s", b, diff)
	}
}

// TestEventJSONRoundTripProperty: every generated event's envelope, the
// whole request context included, survives JSON and back; only the
// content is left out.
func TestEventJSONRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ev := eventlogtest.Event().Draw(t, "event")
		ev.Content = nil
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := eventlog.DecodeEvent(b)
		if err != nil {
			t.Fatalf("DecodeEvent(%s): %v", b, err)
		}
		if diff := cmp.Diff(ev, got); diff != "" {
			t.Fatalf("round trip through %s (-want +got):\n%s", b, diff)
		}
	})
}

func TestJSONNeverHoldsContent(t *testing.T) {
	ev := eventlogtest.Sample(eventlog.KindToolCall, 1, "SECRET-ISH tool arguments")
	for _, v := range []any{ev, eventlog.Entry{Event: ev, ContentMode: eventlog.ContentSealed}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) == "" || contains(b, "SECRET-ISH") || contains(b, "U0VDUkVULUlTSA") {
			t.Errorf("JSON %s holds content", b)
		}
	}
}

func contains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }

// FuzzDecodeEvent: DecodeEvent never panics; whatever it accepts is a
// valid event that survives MarshalJSON then DecodeEvent unchanged (less
// its content, which JSON output never carries).
func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{
		`{"kind":"tool_call","actor":"agent:1","label":"isolated","tool":{"name":"gh.issue","revision":"2"}}`,
		`{"kind":"approval_decision","decision":"allow","approval_id":"apr-1","time":"2026-11-30T08:00:00.000000001Z"}`,
		`{"kind":"process_exited","process_id":"p","result":"exit_1","provider":{"provider":"checkfu:local","revision":"1"},"profile":{"profile":"p","revision":"2"}}`,
		`{"kind":"skip","code":"memory_writeback_skipped","content":"why"}`,
		`{"kind":"denial","kind":"denial"}`,
		`{"kind":"denial","Kind":"denial"}`,
		`{"kind":"settlement","release":"checkfu@1.2.3","run_id":"r","request_id":"q","effect_id":"e"}`,
		`{"kind":"admission","decision":"deny","code":"x"} `,
		`[1,2]`, `"x"`, `{"kind":null}`, `{"time":"9999-12-31T23:59:59Z","kind":"skip"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := eventlog.DecodeEvent(data)
		if err != nil {
			if !errors.Is(err, eventlog.CodeEventInvalid) {
				t.Fatalf("error %v is not %s", err, eventlog.CodeEventInvalid)
			}
			return
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("DecodeEvent accepted an invalid event: %v", err)
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("MarshalJSON of an accepted event: %v", err)
		}
		again, err := eventlog.DecodeEvent(b)
		if err != nil {
			t.Fatalf("DecodeEvent(MarshalJSON(ev)) = %v for %s", err, b)
		}
		ev.Content = nil
		if diff := cmp.Diff(ev, again); diff != "" {
			t.Fatalf("round trip changed the event (-want +got):\n%s", diff)
		}
	})
}
