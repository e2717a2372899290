package eventlog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/note"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
)

// A checkpoint opens only under a key whose name begins its origin; the
// key of another log does not open it.
func ExampleOpenCheckpoint() {
	signer, verifiers := exampleKeys()
	cp, _ := eventlog.SignCheckpoint(signer, "s", eventlog.Head{Seq: 7, Hash: eventlog.Hash{7}})
	_, c, err := eventlog.OpenCheckpoint(cp, verifiers)
	fmt.Println(c.Origin, c.Head.Seq, err)

	_, vkey, _ := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{2}, 32)), "example.com/other")
	other, _ := eventlog.NewCheckpointVerifier(vkey)
	_, _, err = eventlog.OpenCheckpoint(cp, note.VerifierList(other))
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// example.com/eventlog/s 7 <nil>
	// checkpoint_invalid
}

// A log shorter than a checkpoint of it was truncated: VerifyCheckpoint
// says so with a *ChainError, which the hash chain alone cannot show.
func ExampleVerifyCheckpoint() {
	ctx := context.Background()
	signer, verifiers := exampleKeys()
	store := eventlog.NewMemoryStore()
	l, _ := eventlog.New(store, eventlog.Options{Signer: signer})
	for range 3 {
		l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindSkip})
	}
	cp, _ := eventlog.SignCheckpoint(signer, "s", eventlog.Head{Seq: 5, Hash: eventlog.Hash{5}})
	_, err := eventlog.VerifyCheckpoint(ctx, store, "s", cp, verifiers)
	var chain *eventlog.ChainError
	fmt.Println(errors.As(err, &chain))
	// Output: true
}
