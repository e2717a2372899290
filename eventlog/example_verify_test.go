package eventlog_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/checkfu/checkfu/eventlog"
)

// Log.Verify checks the chain like Verify and, with the log's keys, that
// every shred event was made by Log.Shred.
func ExampleLog_Verify() {
	ctx := context.Background()
	keys, _ := eventlog.NewKeys(bytes.Repeat([]byte{7}, eventlog.KeySize))
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{Keys: keys})
	l.Append(ctx, "sess-1", eventlog.Event{Kind: eventlog.KindToolCall, Content: []byte(`{"path":"/tmp/x"}`)})
	l.Shred(ctx, "sess-1", 1)
	head, err := l.Verify(ctx, "sess-1")
	fmt.Println(head.Seq, err)
	// Output: 2 <nil>
}

// A Record prints its wrapped data key and sealed content as their
// lengths, so a store that logs one keeps no copy of either.
func ExampleRecord_LogValue() {
	r := eventlog.Record{Seq: 3, Envelope: []byte{1}, DataKey: make([]byte, 72), Sealed: make([]byte, 57)}
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	log.Info("append", "record", r)
	fmt.Printf("%v\n", r)
	// Output:
	// level=INFO msg=append record.seq=3 record.hash=0000000000000000000000000000000000000000000000000000000000000000 record.envelope_bytes=1 record.data_key_bytes=72 record.sealed_bytes=57 record.shredded_by=0
	// {3 [1] 0000000000000000000000000000000000000000000000000000000000000000 (72 bytes) (57 bytes) 0}
}
