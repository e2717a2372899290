package eventlogtest

import (
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
)

// Ident returns a generator of envelope identifiers (possibly empty).
func Ident() *rapid.Generator[string] {
	return rapid.OneOf(rapid.Just(""), rapid.StringMatching(`[A-Za-z0-9._:@/+=-]{1,24}`))
}

// Event returns a generator of valid events, content included, with times
// in whole nanoseconds in UTC.
func Event() *rapid.Generator[eventlog.Event] {
	return rapid.Custom(func(t *rapid.T) eventlog.Event {
		ev := eventlog.Event{
			Kind:        eventlog.Kind(rapid.IntRange(int(eventlog.KindToolCall), int(eventlog.KindSkip)).Draw(t, "kind")),
			Time:        time.Unix(0, rapid.Int64Range(1, 1<<62).Draw(t, "time")).UTC(),
			Label:       checkfu.Label(rapid.IntRange(0, 2).Draw(t, "label")),
			RequestID:   Ident().Draw(t, "request_id"),
			RunID:       Ident().Draw(t, "run_id"),
			Actor:       Ident().Draw(t, "actor"),
			Role:        Ident().Draw(t, "role"),
			Tenant:      Ident().Draw(t, "tenant"),
			Workspace:   Ident().Draw(t, "workspace"),
			Project:     Ident().Draw(t, "project"),
			SessionID:   Ident().Draw(t, "session_id"),
			Channel:     Ident().Draw(t, "channel"),
			Decision:    eventlog.Decision(rapid.IntRange(0, 2).Draw(t, "decision")),
			Code:        Ident().Draw(t, "code"),
			Profile:     eventlog.ProfileRevision{Profile: Ident().Draw(t, "profile"), Revision: Ident().Draw(t, "profile_rev")},
			Provider:    checkfu.ProviderRevision{Provider: Ident().Draw(t, "provider"), Revision: Ident().Draw(t, "provider_rev")},
			Tool:        eventlog.ToolDescriptor{Name: Ident().Draw(t, "tool"), Revision: Ident().Draw(t, "tool_rev")},
			ApprovalID:  Ident().Draw(t, "approval_id"),
			Approver:    Ident().Draw(t, "approver"),
			Grant:       Ident().Draw(t, "grant"),
			Action:      Ident().Draw(t, "action"),
			EffectClass: Ident().Draw(t, "effect_class"),
			Scope:       Ident().Draw(t, "scope"),
			EffectID:    Ident().Draw(t, "effect_id"),
			ProcessID:   Ident().Draw(t, "process_id"),
			Result:      Ident().Draw(t, "result"),
			Release:     Ident().Draw(t, "release"),
		}
		if rapid.Bool().Draw(t, "has_content") {
			ev.Content = rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(t, "content")
		}
		return ev
	})
}

// Sample returns a fixed, valid event of kind k with the given content,
// for tests that need a plain event.
func Sample(k eventlog.Kind, n int, content string) eventlog.Event {
	ev := eventlog.Event{
		Kind:      k,
		Time:      time.Date(2026, 11, 30, 8, 0, 0, n, time.UTC),
		Label:     checkfu.LabelIsolated,
		RequestID: "req-1",
		RunID:     "run-1",
		Actor:     "agent:test",
		Role:      "member",
		Tenant:    "org-1",
		Workspace: "ws-1",
		Project:   "proj-1",
		SessionID: "sess-1",
		Channel:   "chan-1",
		Decision:  eventlog.DecisionAllow,
		Code:      "rule_matched",
		Profile:   eventlog.ProfileRevision{Profile: "sbxp_test", Revision: "3"},
		Provider:  checkfu.ProviderRevision{Provider: "checkfu:local", Revision: "1"},
		Tool:      eventlog.ToolDescriptor{Name: "github.create_issue", Revision: "7"},
		Result:    "ok",
		Release:   "checkfu@dev",
	}
	if content != "" {
		ev.Content = []byte(content)
	}
	return ev
}
