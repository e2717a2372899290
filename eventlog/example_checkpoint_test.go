package eventlog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/checkfu/checkfu/eventlog"
)

// exampleKeys returns a fixed checkpoint key pair, as note.GenerateKey
// writes one for the name "example.com/eventlog".
func exampleKeys() (note.Signer, note.Verifiers) {
	skey, vkey, _ := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{1}, 32)), "example.com/eventlog")
	signer, _ := note.NewSigner(skey)
	verifier, _ := eventlog.NewCheckpointVerifier(vkey)
	return signer, note.VerifierList(verifier)
}

// A log signs checkpoints of a session's head. Kept elsewhere, a
// checkpoint makes truncation visible, which the chain alone cannot show.
func ExampleLog_Checkpoint() {
	ctx := context.Background()
	signer, verifiers := exampleKeys()
	store := eventlog.NewMemoryStore()
	l, _ := eventlog.New(store, eventlog.Options{Signer: signer})
	for range 3 {
		l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindSkip})
	}
	cp, _ := l.Checkpoint(ctx, "s")
	body, _, _ := strings.Cut(string(cp), "\n\n")
	fmt.Println(strings.Split(body, "\n")[:2])
	head, err := eventlog.VerifyCheckpoint(ctx, store, "s", cp, verifiers)
	fmt.Println(head.Seq, err)
	// Output:
	// [example.com/eventlog/s 3]
	// 3 <nil>
}

// A witness keeps the latest checkpoint of each log and refuses one that
// rolls it back.
func ExampleNewWitness() {
	ctx := context.Background()
	signer, verifiers := exampleKeys()
	w, _ := eventlog.NewWitness(eventlog.NewMemoryStore(), verifiers, nil)
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{Signer: signer, Witness: w})
	for range 3 {
		l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindSkip})
	}
	_, err := l.Checkpoint(ctx, "s") // the witness has seen seq 3
	fmt.Println(err)
	old, _ := eventlog.SignCheckpoint(signer, "s", eventlog.Head{Seq: 2, Hash: eventlog.Hash{2}})
	_, err = w.AddCheckpoint(ctx, 3, nil, old)
	fmt.Println(errors.Is(err, eventlog.CodeCheckpointRollback))
	// Output:
	// <nil>
	// true
}
