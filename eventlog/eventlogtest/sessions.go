package eventlogtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/checkfu/checkfu/eventlog"
)

// A SessionListerStore is a Store that lists its sessions.
type SessionListerStore interface {
	eventlog.Store
	eventlog.SessionLister
}

// TestSessionLister checks Sessions on an empty store that open returns:
// sessions in ascending order with the heads Head reports, paging with
// after and limit, a limit of 0 returning nothing, and a session
// appended between two pages appearing in the later one.
func TestSessionLister[T testing.TB](t T, open func(t T) SessionListerStore) {
	ctx := context.Background()
	s := open(t)
	if got, err := s.Sessions(ctx, "", 10); err != nil || len(got) != 0 {
		t.Fatalf("Sessions of an empty store = %v, %v; want none", got, err)
	}
	l, err := eventlog.New(s, eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{"sess-b": 1, "sess-a": 2, "sess-c": 3}
	for id, n := range counts {
		for range n {
			if _, err := l.Append(ctx, id, eventlog.Event{Kind: eventlog.KindToolCall}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := func(ids ...string) string {
		var out string
		for _, id := range ids {
			h, err := s.Head(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintf("%s %d %s\n", id, h.Seq, h.Hash)
		}
		return out
	}
	show := func(hs []eventlog.SessionHead) string {
		var out string
		for _, h := range hs {
			out += fmt.Sprintf("%s %d %s\n", h.Session, h.Head.Seq, h.Head.Hash)
		}
		return out
	}
	for _, tc := range []struct {
		after string
		limit int
		ids   []string
	}{
		{"", 10, []string{"sess-a", "sess-b", "sess-c"}},
		{"", 2, []string{"sess-a", "sess-b"}},
		{"sess-a", 10, []string{"sess-b", "sess-c"}},
		{"sess-b", 1, []string{"sess-c"}},
		{"sess-c", 10, nil},
		{"", 0, nil},
	} {
		got, err := s.Sessions(ctx, tc.after, tc.limit)
		if err != nil {
			t.Fatalf("Sessions(%q, %d): %v", tc.after, tc.limit, err)
		}
		if show(got) != want(tc.ids...) {
			t.Errorf("Sessions(%q, %d) =\n%swant\n%s", tc.after, tc.limit, show(got), want(tc.ids...))
		}
	}
	if _, err := l.Append(ctx, "sess-d", eventlog.Event{Kind: eventlog.KindToolCall}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Sessions(ctx, "sess-c", 10); show(got) != want("sess-d") {
		t.Errorf("Sessions after a new session = %s, want sess-d", show(got))
	}
}
