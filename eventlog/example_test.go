package eventlog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
)

func ExampleLog_Append() {
	ctx := context.Background()
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	for _, ev := range []eventlog.Event{
		{Kind: eventlog.KindApprovalDecision, Decision: eventlog.DecisionAllow, ApprovalID: "apr-1", Label: checkfu.LabelIsolated},
		{Kind: eventlog.KindApprovalResult, ApprovalID: "apr-1", EffectID: "eff-1", Result: "ok", Label: checkfu.LabelIsolated},
	} {
		seq, err := l.Append(ctx, "session-1", ev)
		fmt.Println(seq, err)
	}
	// Output:
	// 1 <nil>
	// 2 <nil>
}

func ExampleLog_AppendAt() {
	ctx := context.Background()
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	ev := eventlog.Event{Kind: eventlog.KindDenial, Decision: eventlog.DecisionDeny, Code: "no_rule_matched"}
	head, _ := l.AppendAt(ctx, "s", 0, ev)
	fmt.Println("head at", head.Seq)
	// A second writer that also expected an empty log is refused.
	_, err := l.AppendAt(ctx, "s", 0, ev)
	fmt.Println(errors.Is(err, eventlog.CodeSeqConflict))
	// Output:
	// head at 1
	// true
}

func ExampleLog_Read() {
	ctx := context.Background()
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	for _, k := range []eventlog.Kind{eventlog.KindProcessStarted, eventlog.KindToolCall, eventlog.KindProcessExited} {
		l.Append(ctx, "s", eventlog.Event{Kind: k})
	}
	for e, err := range l.Read(ctx, "s", 2) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(e.Seq, e.Kind)
	}
	// Output:
	// 2 tool_call
	// 3 process_exited
}

func ExampleLog_Follow() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	go func() {
		for range 3 {
			l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindToolCall})
		}
	}()
	for e, err := range l.Follow(ctx, "s", 1) {
		if err != nil {
			break
		}
		fmt.Println("followed", e.Seq)
		if e.Seq == 3 {
			cancel()
		}
	}
	// Output:
	// followed 1
	// followed 2
	// followed 3
}

func ExampleVerify() {
	ctx := context.Background()
	store := eventlog.NewMemoryStore()
	l, _ := eventlog.New(store, eventlog.Options{})
	l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindAdmission, Decision: eventlog.DecisionAllow})
	l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindSkip, Code: "memory_writeback_skipped"})
	head, err := eventlog.Verify(ctx, store, "s")
	fmt.Println(head.Seq, err)
	// Output: 2 <nil>
}

func ExampleLog_Content() {
	ctx := context.Background()
	keys, _ := eventlog.NewKeys(bytes.Repeat([]byte{7}, eventlog.KeySize))
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{Keys: keys})
	seq, _ := l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindToolCall, Content: []byte(`{"path":"README.md"}`)})
	content, _ := l.Content(ctx, "s", seq)
	fmt.Printf("%s\n", content)
	l.Shred(ctx, "s", seq)
	_, err := l.Content(ctx, "s", seq)
	fmt.Println(errors.Is(err, eventlog.CodeContentShredded))
	_, err = eventlog.Verify(ctx, l.Store(), "s")
	fmt.Println("verifies after shredding:", err == nil)
	// Output:
	// {"path":"README.md"}
	// true
	// verifies after shredding: true
}

func ExampleDecodeEvent() {
	ev, err := eventlog.DecodeEvent([]byte(`{"kind":"denial","decision":"deny","code":"no_rule_matched","label":"production"}`))
	fmt.Println(ev.Kind, ev.Decision, ev.Code, ev.Label, err)
	_, err = eventlog.DecodeEvent([]byte(`{"kind":"denial","reason":"free text"}`))
	fmt.Println(err)
	// Output:
	// denial deny no_rule_matched production <nil>
	// refused: event_invalid: eventlog: event JSON: json: unknown member "reason" (names are case-sensitive) at top level (offset 17)
}

func ExampleNewKeys() {
	keys, err := eventlog.NewKeys(bytes.Repeat([]byte{7}, eventlog.KeySize))
	fmt.Println(keys, err)
	_, err = eventlog.NewKeys([]byte("short"))
	fmt.Println(errors.Is(err, checkfu.CodeConfigInvalid))
	// Output:
	// eventlog.Keys(redacted) <nil>
	// true
}

func ExampleVerifyHead() {
	ctx := context.Background()
	store := eventlog.NewMemoryStore()
	l, _ := eventlog.New(store, eventlog.Options{})
	l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindToolCall})
	// A head recorded outside the log, say in a receipt, lets a verifier
	// catch truncation and rewrites that a chain alone cannot.
	recorded, _ := l.Head(ctx, "s")
	l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindSettlement})
	head, err := eventlog.VerifyHead(ctx, store, "s", recorded)
	fmt.Println(head.Seq, err)
	// Output: 2 <nil>
}
