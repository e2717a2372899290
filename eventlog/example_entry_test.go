package eventlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
)

// An Entry marshals as one JSON object for an audit export: the envelope,
// its place in the chain and what was kept of the content, never the
// content itself.
func ExampleEntry_MarshalJSON() {
	ctx := context.Background()
	keys, _ := eventlog.NewKeys(bytes.Repeat([]byte{7}, eventlog.KeySize))
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{Keys: keys})
	l.Append(ctx, "s", eventlog.Event{
		Kind:    eventlog.KindToolCall,
		Time:    time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		Label:   checkfu.LabelIsolated,
		Result:  "ok",
		Content: []byte(`{"path":"secret-plans.md"}`),
	})
	for e, err := range l.Read(ctx, "s", 1) {
		if err != nil {
			panic(err)
		}
		b, _ := json.Marshal(e)
		var fields map[string]any
		json.Unmarshal(b, &fields)
		fmt.Println(fields["session"], fields["seq"], fields["kind"], fields["content_mode"], fields["hash"] == e.Hash.String())
		fmt.Println(bytes.Contains(b, []byte("secret-plans")))
	}
	// Output:
	// s 1 tool_call sealed true
	// false
}

// An Event prints, logs and gob-encodes without its content, so that an
// integrator who logs an event before appending it does not put its
// content in a log file.
func ExampleEvent_Format() {
	ev := eventlog.Event{Kind: eventlog.KindToolCall, Actor: "agent:1", Content: []byte("secret-plans.md")}
	fmt.Printf("%+v\n", ev)
	// Output:
	// {Kind:tool_call Time:0001-01-01 00:00:00 +0000 UTC Label:mock RequestID: RunID: Actor:agent:1 Role: Tenant: Workspace: Project: SessionID: Channel: Decision:none Code: Profile:{Profile: Revision:} Provider:@ Tool:{Name: Revision:} ApprovalID: Approver: Grant: Action: EffectClass: Scope: EffectID: ProcessID: Result: Release: Content:[]}
}
