package pglog_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/pglog"
)

// ExampleOpen needs a PostgreSQL server, so it has no output to check.
// The search_path parameter picks the schema that holds the tables.
func ExampleOpen() {
	ctx := context.Background()
	store, err := pglog.Open(ctx, "postgres://runner@db.internal:5432/checkfu?sslmode=verify-full&search_path=audit")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	l, _ := eventlog.New(store, eventlog.Options{})
	// Runners on other hosts append to the same session through their own
	// Store; a batch that loses a race is rebuilt over the new head.
	seq, err := l.Append(ctx, "session-1", eventlog.Event{Kind: eventlog.KindAdmission, Decision: eventlog.DecisionAllow})
	fmt.Println(seq, err)
}

// ExampleOpenPool shares an embedder's pool: the log's tables go in a
// schema of their own, and closing the Store leaves the pool open. It
// needs a PostgreSQL server, so it has no output to check.
func ExampleOpenPool() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal:5432/app?sslmode=verify-full")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	store, err := pglog.OpenPool(ctx, pool, "checkfu_audit")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	l, _ := eventlog.New(store, eventlog.Options{})
	seq, err := l.Append(ctx, "session-1", eventlog.Event{Kind: eventlog.KindAdmission})
	fmt.Println(seq, err)
}
