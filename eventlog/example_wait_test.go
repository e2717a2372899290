package eventlog_test

import (
	"context"
	"fmt"

	"github.com/checkfu/checkfu/eventlog"
)

// Wait blocks until a seq is durable: the primitive under Log.Follow.
func ExampleMemoryStore_Wait() {
	ctx := context.Background()
	store := eventlog.NewMemoryStore()
	l, _ := eventlog.New(store, eventlog.Options{})
	done := make(chan error)
	go func() { done <- store.Wait(ctx, "s", 1) }()
	l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindProcessStarted})
	fmt.Println(<-done)

	// A cancelled wait returns the context's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	fmt.Println(store.Wait(cctx, "s", 2))
	// Output:
	// <nil>
	// context canceled
}
