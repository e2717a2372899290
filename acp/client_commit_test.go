package acp_test

import (
	"context"
	"testing"

	"github.com/checkfu/checkfu/acp"
)

// permissionLine is a permission request of session s1 under id 0.
const permissionLine = `{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}}`

// TestCommittedPermissionAnswerStandsAfterCancel: a handler that
// committed its answer (as a host does before it books an approval) has
// that answer given to the agent even when Cancel comes before it
// returns, and its context is not cancelled by that Cancel. The answer
// a host records is the answer the agent gets.
func TestCommittedPermissionAnswerStandsAfterCancel(t *testing.T) {
	committed := make(chan bool, 1)
	cancelled := make(chan struct{})
	ctxErr := make(chan error, 1)
	c, a, _ := newRawClient(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			committed <- acp.CommitPermission(ctx)
			<-cancelled // the booking, during which the host cancels
			ctxErr <- ctx.Err()
			return acp.Select("allow")
		},
	})
	a.initialize(c)
	a.openSession(c, "s1")
	a.send(permissionLine)
	if !<-committed {
		t.Fatal("CommitPermission = false for a live request")
	}
	if err := c.Cancel("s1"); err != nil {
		t.Fatal(err)
	}
	close(cancelled)
	if err := <-ctxErr; err != nil {
		t.Errorf("the committed request's context = %v after Cancel, want live", err)
	}
	for {
		m := a.next()
		if m.Method == acp.MethodSessionCancel {
			continue
		}
		if !m.IsResponse() || m.ID != acp.IntID(0) {
			t.Fatalf("unexpected message %+v", m)
		}
		if got, want := string(m.Result), `{"outcome":{"outcome":"selected","optionId":"allow"}}`; got != want {
			t.Fatalf("committed request answered %s after Cancel, want %s", got, want)
		}
		return
	}
}

// TestCommitAfterCancelFails: once Cancel has released a request, its
// handler cannot commit, and the agent is answered "cancelled" whatever
// the handler returns: a host that commits before it books books
// nothing for it.
func TestCommitAfterCancelFails(t *testing.T) {
	asked := make(chan struct{})
	committed := make(chan bool, 1)
	c, a, _ := newRawClient(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			close(asked)
			<-ctx.Done()
			committed <- acp.CommitPermission(ctx)
			return acp.Select("allow")
		},
	})
	a.initialize(c)
	a.openSession(c, "s1")
	a.send(permissionLine)
	<-asked
	if err := c.Cancel("s1"); err != nil {
		t.Fatal(err)
	}
	if <-committed {
		t.Error("CommitPermission = true for a request Cancel released")
	}
	for {
		m := a.next()
		if m.Method == acp.MethodSessionCancel {
			continue
		}
		if got := string(m.Result); !m.IsResponse() || got != `{"outcome":{"outcome":"cancelled"}}` {
			t.Fatalf("answer after Cancel = %+v, want cancelled", m)
		}
		return
	}
}

// TestCommitNeedsTheHandlersContext: a context the client did not give a
// permission handler commits nothing.
func TestCommitNeedsTheHandlersContext(t *testing.T) {
	if acp.CommitPermission(context.Background()) {
		t.Error("CommitPermission(Background) = true")
	}
}

// TestCommittedPermissionAnswerStandsAfterTheClientEnds: the client's
// end (here a malformed line from the agent) cancels a committed
// request's context, but the answer the handler committed is still the
// one written, not "cancelled": the host has recorded it.
func TestCommittedPermissionAnswerStandsAfterTheClientEnds(t *testing.T) {
	committed := make(chan bool, 1)
	ended := make(chan struct{})
	c, a, _ := newRawClient(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			committed <- acp.CommitPermission(ctx)
			<-ended
			return acp.Select("allow")
		},
	})
	a.initialize(c)
	a.openSession(c, "s1")
	a.send(permissionLine)
	if !<-committed {
		t.Fatal("CommitPermission = false for a live request")
	}
	a.send(`hello from a debug print`)
	<-c.Done()
	close(ended)
	m := a.next()
	if got, want := string(m.Result), `{"outcome":{"outcome":"selected","optionId":"allow"}}`; !m.IsResponse() || got != want {
		t.Fatalf("committed request answered %+v after the client ended, want %s", m, want)
	}
}
