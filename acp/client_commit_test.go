package acp_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"pgregory.net/rapid"
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
	m := nextAnswer(a)
	if got, want := string(m.Result), `{"outcome":{"outcome":"selected","optionId":"allow"}}`; m.ID != acp.IntID(0) || got != want {
		t.Fatalf("committed request answered %+v after Cancel, want %s", m, want)
	}
}

// nextAnswer returns the next response the client wrote, past the
// session/cancel notifications before it; any other message fails the
// test.
func nextAnswer(a *rawAgent) acp.Message {
	a.t.Helper()
	for {
		m := a.next()
		if m.Method == acp.MethodSessionCancel {
			continue
		}
		if !m.IsResponse() {
			a.t.Fatalf("unexpected message %+v", m)
		}
		return m
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
	if m := nextAnswer(a); string(m.Result) != `{"outcome":{"outcome":"cancelled"}}` {
		t.Fatalf("answer after Cancel = %+v, want cancelled", m)
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

// TestPropertyCommittedAnswerIsTheAnswerGiven: over random sets of up to
// eight permission requests across two sessions, each handler committing
// either before a Cancel of the first session or after it, a commit
// reports true exactly when it came before a Cancel of its request's
// session, and every request is answered exactly once: with the
// handler's answer when its commit reported true, else "cancelled".
func TestPropertyCommittedAnswerIsTheAnswerGiven(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(rt, "requests")
		early := rapid.SliceOfN(rapid.Bool(), n, n).Draw(rt, "commits before the cancel")
		session := rapid.SliceOfN(rapid.SampledFrom([]string{"s1", "s2"}), n, n).Draw(rt, "sessions")
		started := make(chan struct{}, n)
		release := make(chan struct{})
		var mu sync.Mutex
		committed := map[string]bool{}
		c, a, _ := newRawClient(t, acp.Config{
			OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
				i, _ := strconv.Atoi(strings.TrimPrefix(req.ToolCall.ToolCallID, "c"))
				var ok bool
				if early[i] {
					ok = acp.CommitPermission(ctx)
				}
				started <- struct{}{}
				<-release
				if !early[i] {
					ok = acp.CommitPermission(ctx)
				}
				mu.Lock()
				committed[req.ToolCall.ToolCallID] = ok
				mu.Unlock()
				return acp.Select("allow")
			},
		})
		a.initialize(c)
		a.openSession(c, "s1")
		a.openSession(c, "s2")
		for i := range n {
			a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":{"sessionId":%q,"toolCall":{"toolCallId":"c%d"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}}`, i, session[i], i))
		}
		for range n {
			<-started
		}
		if err := c.Cancel("s1"); err != nil {
			rt.Fatal(err)
		}
		close(release)
		answers := map[string]string{}
		for len(answers) < n {
			m := nextAnswer(a)
			if _, twice := answers[m.ID.String()]; twice {
				rt.Fatalf("request %s answered twice", m.ID)
			}
			answers[m.ID.String()] = string(m.Result)
		}
		mu.Lock()
		defer mu.Unlock()
		for i := range n {
			id := fmt.Sprintf("c%d", i)
			if want := early[i] || session[i] == "s2"; committed[id] != want {
				rt.Errorf("request %d (session %s, commit before the cancel %v): CommitPermission = %v, want %v", i, session[i], early[i], committed[id], want)
			}
			want := `{"outcome":{"outcome":"cancelled"}}`
			if committed[id] {
				want = `{"outcome":{"outcome":"selected","optionId":"allow"}}`
			}
			if got := answers[strconv.Itoa(i)]; got != want {
				rt.Errorf("request %d (committed %v) answered %s, want %s", i, committed[id], got, want)
			}
		}
	})
}
