package sqlitelog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/sqlitelog"
)

func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "eventlog-example-")
	defer os.RemoveAll(dir)

	store, err := sqlitelog.Open(ctx, filepath.Join(dir, "audit.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	l, _ := eventlog.New(store, eventlog.Options{})
	seq, err := l.Append(ctx, "session-1", eventlog.Event{Kind: eventlog.KindProcessStarted, ProcessID: "p-1"})
	fmt.Println(seq, err) // durable: committed with synchronous=FULL
	head, err := eventlog.Verify(ctx, store, "session-1")
	fmt.Println(head.Seq, err)
	// Output:
	// 1 <nil>
	// 1 <nil>
}
