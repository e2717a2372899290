package eventlog_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

func TestValidate(t *testing.T) {
	ok := eventlogtest.Sample(eventlog.KindToolCall, 1, "content may hold anything: spaces, \n, \x00")
	if err := ok.Validate(); err != nil {
		t.Fatalf("Validate(sample) = %v", err)
	}
	tests := []struct {
		name   string
		mutate func(*eventlog.Event)
		msg    string
	}{
		{"zero kind", func(e *eventlog.Event) { e.Kind = 0 }, "eventlog: event has no valid kind (got kind(0))"},
		{"kind out of range", func(e *eventlog.Event) { e.Kind = 200 }, "eventlog: event has no valid kind (got kind(200))"},
		{"label out of range", func(e *eventlog.Event) { e.Label = 9 }, "eventlog: event label label(9) is not an evidence label"},
		{"decision out of range", func(e *eventlog.Event) { e.Decision = 3 }, "eventlog: event decision decision(3) is not a decision"},
		{"space in code", func(e *eventlog.Event) { e.Code = "permission denied" }, "eventlog: code has a byte at offset 10 that an identifier may not hold (allowed: ASCII letters, digits and ._:@/+-=); put free text in content"},
		{"newline in actor", func(e *eventlog.Event) { e.Actor = "a\nb" }, "eventlog: actor has a byte at offset 1"},
		{"non-ASCII tool", func(e *eventlog.Event) { e.Tool.Name = "tööl" }, "eventlog: tool.name has a byte at offset 1"},
		{"space in tenant", func(e *eventlog.Event) { e.Tenant = "org 1" }, "eventlog: tenant has a byte at offset 3"},
		{"newline in role", func(e *eventlog.Event) { e.Role = "admin\n" }, "eventlog: role has a byte at offset 5"},
		{"long workspace", func(e *eventlog.Event) { e.Workspace = strings.Repeat("w", 257) }, "eventlog: workspace is 257 bytes"},
		{"quote in project", func(e *eventlog.Event) { e.Project = `p"` }, "eventlog: project has a byte at offset 1"},
		{"NUL in session_id", func(e *eventlog.Event) { e.SessionID = "s\x00" }, "eventlog: session_id has a byte at offset 1"},
		{"space in channel", func(e *eventlog.Event) { e.Channel = "ch 1" }, "eventlog: channel has a byte at offset 2"},
		{"long channel", func(e *eventlog.Event) { e.Channel = strings.Repeat("c", 257) }, "eventlog: channel is 257 bytes"},
		{"long release", func(e *eventlog.Event) { e.Release = strings.Repeat("r", 257) }, "eventlog: release is 257 bytes, more than the 256 allowed"},
		{"huge content", func(e *eventlog.Event) { e.Content = make([]byte, eventlog.MaxContent+1) }, "eventlog: content is 1048577 bytes"},
		{"time before 1970", func(e *eventlog.Event) { e.Time = time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC) }, "eventlog: event time 1969-01-01T00:00:00Z is outside 1970..2262"},
	}
	for _, tt := range tests {
		ev := ok
		tt.mutate(&ev)
		err := ev.Validate()
		if !errors.Is(err, eventlog.CodeEventInvalid) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: Validate() = %v, want %s containing %q", tt.name, err, eventlog.CodeEventInvalid, tt.msg)
		}
	}
}

func TestKindText(t *testing.T) {
	for k := eventlog.KindToolCall; k <= eventlog.KindSkip; k++ {
		got, err := eventlog.ParseKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	for _, s := range []string{"", "Tool_call", "tool_call ", "kind(1)"} {
		if _, err := eventlog.ParseKind(s); !errors.Is(err, eventlog.CodeEventInvalid) {
			t.Errorf("ParseKind(%q) error %v, want event_invalid", s, err)
		}
	}
	if _, err := eventlog.Kind(0).MarshalText(); err == nil {
		t.Error("the zero Kind marshals")
	}
}

func TestSessionIDs(t *testing.T) {
	for _, s := range []string{"", "a b", "x\x00", strings.Repeat("s", 257)} {
		if err := eventlog.CheckSession(s); !errors.Is(err, eventlog.CodeSessionInvalid) {
			t.Errorf("CheckSession(%q) = %v, want session_invalid", s, err)
		}
	}
	if err := eventlog.CheckSession("sess_01J:run/7"); err != nil {
		t.Errorf("CheckSession(valid) = %v", err)
	}
	_ = checkfu.LabelMock
}

// A session id can come from an untrusted peer (an agent names its ACP
// sessions). The refusal must not carry all of an oversized id into logs:
// it quotes it through checkfu.Quote, cut at 64 bytes with its length.
func TestCheckSessionQuotesABoundedPrefix(t *testing.T) {
	err := eventlog.CheckSession(strings.Repeat("s", 1<<20) + " ")
	if !errors.Is(err, eventlog.CodeSessionInvalid) {
		t.Fatalf("CheckSession = %v, want session_invalid", err)
	}
	want := `refused: session_invalid: eventlog: session id "` + strings.Repeat("s", 64) + `"... (1048577 bytes) is not an identifier (ASCII letters, digits and ._:@/+-=, at most 256 bytes)`
	if err.Error() != want {
		t.Errorf("CheckSession error\n got %s\nwant %s", err, want)
	}
}

// TestChainErrorIsARefusal: a ChainError carries its code as a
// *checkfu.Refusal, so checkfu.CodeOf, errors.As and errors.Is agree on
// it, wrapped or not, and its text is its own.
func TestChainErrorIsARefusal(t *testing.T) {
	ce := &eventlog.ChainError{Session: "s", Seq: 3, Problem: "missing"}
	for _, err := range []error{ce, fmt.Errorf("audit: %w", ce)} {
		if code, ok := checkfu.CodeOf(err); !ok || code != eventlog.CodeChainBroken {
			t.Errorf("CodeOf(%v) = %q, %v; want %s", err, code, ok, eventlog.CodeChainBroken)
		}
		var r *checkfu.Refusal
		if !errors.As(err, &r) || r.Code != eventlog.CodeChainBroken {
			t.Errorf("errors.As(%v, *Refusal) = %v", err, r)
		}
		if !errors.Is(err, eventlog.CodeChainBroken) || errors.Is(err, eventlog.CodeSeqConflict) {
			t.Errorf("errors.Is(%v) does not match exactly chain_broken", err)
		}
		var got *eventlog.ChainError
		if !errors.As(err, &got) || got.Seq != 3 {
			t.Errorf("errors.As(%v, *ChainError) = %v", err, got)
		}
	}
	if got, want := ce.Error(), `eventlog: session "s": chain broken at seq 3: missing`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
