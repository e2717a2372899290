package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
)

// bindRC is a valid request context for the tests of bind.
var bindRC = checkfu.RequestContext{Actor: "user:bob", Role: "member", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
	Session: "sess-1", Request: "req-1", Run: "run-1", Release: "rel-1"}

// openForBind opens a channel of a pipeline that has nothing but its
// channel book: enough for bind.
func openForBind(t testing.TB) *Channel {
	p := &Pipeline{channels: map[*Channel]bool{}}
	ch, err := p.Open(bindRC, "lease-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// bindLayered is bind as it was first written: the request context and
// the channel layered over the caller's context by context.WithValue.
func bindLayered(ctx context.Context, ch *Channel) context.Context {
	return authz.WithChannel(checkfu.WithRequestContext(ctx, ch.rc), ch.id)
}

type bindKey int

// TestBindIsTheLayeredContext holds bind's context to the layered one it
// replaces: for a caller's context carrying any mix of a forged request
// context, a forged channel and its own values, every key reads the
// same through both (the channel's request context and ID, never the
// caller's), and so do the deadline, the cancellation and its cause.
func TestBindIsTheLayeredContext(t *testing.T) {
	ch := openForBind(t)
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		if rapid.Bool().Draw(t, "forged request context") {
			forged := bindRC
			forged.Actor = "user:mallory"
			ctx = checkfu.WithRequestContext(ctx, forged)
		}
		if rapid.Bool().Draw(t, "forged channel") {
			ctx = authz.WithChannel(ctx, "ch-forged")
		}
		keys := rapid.IntRange(0, 3).Draw(t, "keys")
		for k := range keys {
			ctx = context.WithValue(ctx, bindKey(k), k)
		}
		var cancel context.CancelCauseFunc
		switch rapid.IntRange(0, 2).Draw(t, "cancellation") {
		case 1:
			ctx, cancel = context.WithCancelCause(ctx)
		case 2:
			var stop context.CancelFunc
			ctx, stop = context.WithDeadline(ctx, time.Now().Add(time.Hour))
			defer stop()
		}
		got, _ := ch.bind(ctx)
		want := bindLayered(ctx, ch)
		derived, stop := context.WithCancel(got) // a hop's own context
		defer stop()
		if rc, ok := checkfu.RequestContextFrom(got); !ok || rc != ch.rc {
			t.Fatalf("bind's request context = %+v, %v; want the channel's", rc, ok)
		}
		for _, k := range []any{bindKey(0), bindKey(1), bindKey(2), bindKey(3)} {
			if g, w := got.Value(k), want.Value(k); g != w {
				t.Fatalf("Value(%v) = %v, the layered context gives %v", k, g, w)
			}
		}
		if g, w := authz.ChannelFrom(got), authz.ChannelFrom(want); g != w || g != ch.id {
			t.Fatalf("ChannelFrom = %q, the layered context gives %q (channel %q)", g, w, ch.id)
		}
		gd, gok := got.Deadline()
		wd, wok := want.Deadline()
		if gd != wd || gok != wok {
			t.Fatalf("Deadline = %v %v, want %v %v", gd, gok, wd, wok)
		}
		if (got.Done() == nil) != (want.Done() == nil) {
			t.Fatalf("Done() nil = %v, the layered context's %v", got.Done() == nil, want.Done() == nil)
		}
		if cancel != nil {
			cause := errors.New("caller gone")
			cancel(cause)
			<-got.Done()
			<-derived.Done()
			if got.Err() != want.Err() || context.Cause(got) != cause || context.Cause(derived) != cause {
				t.Fatalf("after cancel: Err %v (want %v), Cause %v, derived's Cause %v", got.Err(), want.Err(), context.Cause(got), context.Cause(derived))
			}
		}
		if rc, _ := checkfu.RequestContextFrom(context.WithoutCancel(got)); rc != ch.rc {
			t.Fatalf("the detached context's request context = %+v, want the channel's", rc)
		}
	})
}

// TestBindAllocatesOnce: bind costs a call one allocation.
func TestBindAllocatesOnce(t *testing.T) {
	ch := openForBind(t)
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { ch.bind(ctx) }); n > 1 {
		t.Errorf("bind: %v allocations, want 1", n)
	}
}
