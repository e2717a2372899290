package eventlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
)

func ExampleNew() {
	ctx := context.Background()
	keys, _ := eventlog.NewKeys(bytes.Repeat([]byte{7}, eventlog.KeySize))
	l, err := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{
		Keys: keys,
		Now:  func() time.Time { return time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		panic(err)
	}
	seq, err := l.Append(ctx, "session-1", eventlog.Event{Kind: eventlog.KindToolCall, Content: []byte("tool output")})
	fmt.Println(seq, err)

	// A log without Keys refuses content rather than storing it in clear.
	plain, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	_, err = plain.Append(ctx, "session-1", eventlog.Event{Kind: eventlog.KindToolCall, Content: []byte("tool output")})
	fmt.Println(errors.Is(err, eventlog.CodeContentKeyMissing))

	// A zero-data-retention log still needs Keys, for the keyed digests.
	_, err = eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{ZeroDataRetention: true})
	fmt.Println(errors.Is(err, eventlog.CodeContentKeyMissing))
	// Output:
	// 1 <nil>
	// true
	// true
}

// A zero-data-retention log keeps only a keyed digest of the content.
func ExampleNew_zeroDataRetention() {
	ctx := context.Background()
	keys, _ := eventlog.NewKeys(bytes.Repeat([]byte{7}, eventlog.KeySize))
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{Keys: keys, ZeroDataRetention: true})
	seq, _ := l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindToolCall, Content: []byte(`{"path":"README.md"}`)})
	for e, err := range l.Read(ctx, "s", seq) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.ContentMode, e.ContentDigest.IsZero())
	}
	_, err := l.Content(ctx, "s", seq)
	fmt.Println(errors.Is(err, eventlog.CodeContentNotRetained))
	// Output:
	// digest_only false
	// true
}

func ExampleNewMemoryStore() {
	ctx := context.Background()
	store := eventlog.NewMemoryStore()
	head, _ := store.Head(ctx, "s")
	fmt.Println(head.Seq, head.Hash.IsZero()) // an empty session

	l, _ := eventlog.New(store, eventlog.Options{})
	l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindProcessStarted, Label: checkfu.LabelMock})
	head, _ = store.Head(ctx, "s")
	fmt.Println(head.Seq, head.Hash.IsZero())

	store.Close()
	_, err := store.Head(ctx, "s")
	fmt.Println(err != nil)
	// Output:
	// 0 true
	// 1 false
	// true
}

func ExampleLog_Head() {
	ctx := context.Background()
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindAdmission, Decision: eventlog.DecisionAllow})
	head, err := l.Head(ctx, "s")
	fmt.Println(head.Seq, err)

	// Expected position as a condition: append only if nobody else did.
	_, err = l.AppendAt(ctx, "s", head.Seq, eventlog.Event{Kind: eventlog.KindProcessStarted})
	fmt.Println(err)
	// Output:
	// 1 <nil>
	// <nil>
}

func ExampleLog_Shred() {
	ctx := context.Background()
	keys, _ := eventlog.NewKeys(bytes.Repeat([]byte{7}, eventlog.KeySize))
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{Keys: keys})
	seq, _ := l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindToolCall, Content: []byte("personal data")})
	if err := l.Shred(ctx, "s", seq); err != nil {
		panic(err)
	}
	for e, err := range l.Read(ctx, "s", seq) {
		fmt.Println(e.Seq, e.Kind, e.ContentMode, e.Shredded, e.ShredOf, err)
	}
	_, err := eventlog.Verify(ctx, l.Store(), "s")
	fmt.Println("verifies:", err == nil)
	// Output:
	// 1 tool_call sealed true 0 <nil>
	// 2 shred none false 1 <nil>
	// verifies: true
}

// Envelope strings are identifiers: free text, such as an error message
// that might quote a secret, cannot ride in them.
func ExampleEvent_Validate() {
	ev := eventlog.Event{Kind: eventlog.KindDenial, Decision: eventlog.DecisionDeny, Code: "no_rule_matched"}
	fmt.Println(ev.Validate())

	ev.Code = "GET https://api.example.com/?token=abc failed"
	err := ev.Validate()
	fmt.Println(errors.Is(err, eventlog.CodeEventInvalid))

	// The zero Kind is not a kind.
	fmt.Println(errors.Is((&eventlog.Event{}).Validate(), eventlog.CodeEventInvalid))
	// Output:
	// <nil>
	// true
	// true
}

func ExampleEvent_MarshalJSON() {
	ev := eventlog.Event{
		Kind:     eventlog.KindToolCall,
		Time:     time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		Label:    checkfu.LabelIsolated,
		Decision: eventlog.DecisionAllow,
		Tool:     eventlog.ToolDescriptor{Name: "read_file", Revision: "3"},
		Content:  []byte(`{"path":"README.md"}`),
	}
	b, err := json.Marshal(ev)
	fmt.Println(err, bytes.Contains(b, []byte("README")))
	back, err := eventlog.DecodeEvent(b)
	fmt.Println(back.Kind, back.Tool.Name, back.Content == nil, err)
	// Output:
	// <nil> false
	// tool_call read_file true <nil>
}

func ExampleParseKind() {
	k, err := eventlog.ParseKind("approval_decision")
	fmt.Println(k, k.Valid(), err)
	_, err = eventlog.ParseKind("ApprovalDecision")
	fmt.Println(errors.Is(err, eventlog.CodeEventInvalid))
	// Output:
	// approval_decision true <nil>
	// true
}

func ExampleCheckSession() {
	fmt.Println(eventlog.CheckSession("run-42/session-1"))
	err := eventlog.CheckSession("session 1")
	fmt.Println(errors.Is(err, eventlog.CodeSessionInvalid))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// refused: session_invalid: eventlog: session id "session 1" is not an identifier (ASCII letters, digits and ._:@/+-=, at most 256 bytes)
}

// A Store implementation's Append, here over a table kept in a slice (a
// SQL table in practice): check the arguments with CheckAppend, refuse a
// stale expected seq with SeqConflict, then write all rows or none.
func ExampleCheckAppend() {
	type row struct {
		seq      uint64
		envelope []byte
		hash     []byte // a BLOB column
	}
	var table []row
	appendRows := func(session string, expected uint64, recs []eventlog.Record) error {
		if err := eventlog.CheckAppend(session, expected, recs); err != nil {
			return err
		}
		if last := uint64(len(table)); last != expected {
			return eventlog.SeqConflict(session, expected, last)
		}
		for _, r := range recs {
			table = append(table, row{r.Seq, r.Envelope, r.Hash[:]})
		}
		return nil
	}

	// Records as a Log produces them.
	ctx := context.Background()
	src := eventlog.NewMemoryStore()
	l, _ := eventlog.New(src, eventlog.Options{})
	l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindProcessStarted})
	l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindProcessExited, Result: "ok"})
	recs, _ := src.Read(ctx, "s", 1, 10)

	fmt.Println(appendRows("s", 0, recs))
	fmt.Println(errors.Is(appendRows("s", 0, recs), eventlog.CodeSeqConflict))
	fmt.Println(errors.Is(appendRows("s", 2, recs), eventlog.CodeEventInvalid)) // numbered 1, 2: not 3, 4
	fmt.Println(len(table))
	// Output:
	// <nil>
	// true
	// true
	// 2
}

func ExampleSeqConflict() {
	err := eventlog.SeqConflict("s", 4, 6)
	fmt.Println(errors.Is(err, eventlog.CodeSeqConflict))
	fmt.Println(err)
	// Output:
	// true
	// refused: seq_conflict: eventlog: session "s": expected last seq 4, but the log is at 6 (another writer appended; re-read the head and retry)
}

// HashFromBytes turns a hash column back into a Hash. A value of the
// wrong length becomes the zero Hash, which matches no record, so Verify
// names the bad seq instead of the read failing.
func ExampleHashFromBytes() {
	ctx := context.Background()
	store := eventlog.NewMemoryStore()
	l, _ := eventlog.New(store, eventlog.Options{})
	l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindToolCall})
	recs, _ := store.Read(ctx, "s", 1, 1)
	column := recs[0].Hash[:] // as stored in a BLOB column

	fmt.Println(eventlog.HashFromBytes(column) == recs[0].Hash)
	fmt.Println(eventlog.HashFromBytes(column[:31]).IsZero())
	// Output:
	// true
	// true
}

func ExampleHash_UnmarshalText() {
	var h eventlog.Hash
	err := h.UnmarshalText([]byte("0000000000000000000000000000000000000000000000000000000000000001"))
	fmt.Println(err, h.IsZero())
	// One spelling only: upper-case hex is refused.
	err = h.UnmarshalText([]byte("00000000000000000000000000000000000000000000000000000000000000AB"))
	fmt.Println(errors.Is(err, eventlog.CodeEventInvalid))
	// Output:
	// <nil> false
	// true
}

func ExampleDecision_UnmarshalText() {
	var d eventlog.Decision
	fmt.Println(d, d.Valid()) // the zero Decision records no decision, never an allow
	err := d.UnmarshalText([]byte("deny"))
	fmt.Println(d, err)
	fmt.Println(d.UnmarshalText([]byte("Allow")) != nil)
	// Output:
	// none true
	// deny <nil>
	// true
}
