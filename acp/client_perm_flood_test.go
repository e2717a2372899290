package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/checkfu/checkfu/acp"
)

// A hostile agent floods the client with permission requests while the
// Runner's handler waits for a user. Each would hold a goroutine and a
// prompt for as long as the user takes: the client must bound how many
// reach OnPermission at once and deny the rest itself, at once.
func TestPermissionFloodIsBounded(t *testing.T) {
	const flood = 4 * acp.MaxPendingPermissions
	var inFlight atomic.Int64
	over := make(chan struct{})
	var overOnce sync.Once
	c, a, _ := newRawClient(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			if inFlight.Add(1) > acp.MaxPendingPermissions {
				overOnce.Do(func() { close(over) })
			}
			defer inFlight.Add(-1)
			<-ctx.Done() // a user who never answers
			return acp.Select("yes")
		},
	})
	a.initialize(c)
	a.openSession(c, "s")
	var batch []string
	for i := range flood {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c%d"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`, i, i))
	}
	a.send("[" + strings.Join(batch, ",") + "]")
	for range flood - acp.MaxPendingPermissions {
		var m acp.Message
		select {
		case <-over:
			t.Fatalf("more than %d permission requests reached OnPermission at once", acp.MaxPendingPermissions)
		case m = <-a.lines:
		}
		var res acp.RequestPermissionResponse
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatalf("answer %s: %v", m.Result, err)
		}
		if res.Outcome != acp.Select("no") {
			t.Fatalf("an excess permission request was answered %+v, want the deny default", res.Outcome)
		}
	}
	if n := inFlight.Load(); n > acp.MaxPendingPermissions {
		t.Fatalf("%d permission requests in OnPermission, want at most %d", n, acp.MaxPendingPermissions)
	}
}

// A hostile agent sends permission requests near the line bound while the
// handler waits for a user: 64 of them held about 2 GiB. The client bounds
// the bytes the requests with OnPermission hold between them, and denies
// the rest itself, at once; one request over the whole bound is denied
// without asking.
func TestPendingPermissionBytesAreBounded(t *testing.T) {
	tests := []struct {
		name  string
		bound int // Config.MaxPendingPermissionBytes
		size  int // each request's toolCall text
		empty int // and its number of empty options, 48 bytes each
		n     int // how many requests
	}{
		// 1.1 MiB held each from 72 KiB on the wire.
		{"default", 0, 0, 24 << 10, 20},
		{"configured", 256 << 10, 32 << 10, 0, 16},
		{"one over the bound", 1 << 10, 2 << 10, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bound := tt.bound
			if bound == 0 {
				bound = acp.DefaultMaxPendingPermissionBytes
			}
			var held, maxHeld atomic.Int64
			entered := make(chan struct{}, tt.n)
			c, a, _ := newRawClient(t, acp.Config{
				MaxPendingPermissionBytes: tt.bound,
				OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
					size := int64(heldBy(req))
					n := held.Add(size)
					for m := maxHeld.Load(); n > m && !maxHeld.CompareAndSwap(m, n); m = maxHeld.Load() {
					}
					defer held.Add(-size)
					entered <- struct{}{}
					<-ctx.Done() // a user who never answers
					return acp.Select("yes")
				},
			})
			a.initialize(c)
			a.openSession(c, "s")
			text := strings.Repeat("x", tt.size)
			empty := strings.Repeat("{},", tt.empty)
			var asked, denied int
			for i := range tt.n {
				a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c%d","content":[{"type":"content","content":{"type":"text","text":%q}}]},"options":[%s{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`, i, i, text, empty))
				select {
				case <-entered:
					asked++
				case m := <-a.lines:
					var res acp.RequestPermissionResponse
					if err := json.Unmarshal(m.Result, &res); err != nil || res.Outcome != acp.Select("no") {
						t.Fatalf("request %d answered %s (%v), want the deny default", i, m.Result, err)
					}
					denied++
				}
			}
			if got := maxHeld.Load(); got > int64(bound) {
				t.Fatalf("requests with OnPermission held %d bytes at once, bound %d", got, bound)
			}
			if denied == 0 {
				t.Fatalf("%d requests of %d bytes all reached OnPermission under a bound of %d", tt.n, tt.size, bound)
			}
			if tt.n > 1 && asked == 0 {
				t.Fatalf("no request reached OnPermission under a bound of %d", bound)
			}
		})
	}
}

// heldBy is what Config.MaxPendingPermissionBytes documents it counts for
// req: the bytes of its strings and of ToolCall.Raw, plus 48 per option.
func heldBy(req acp.RequestPermissionRequest) int {
	n := len(req.SessionID) + len(req.ToolCall.ToolCallID) + len(req.ToolCall.Title) + len(req.ToolCall.Kind) + len(req.ToolCall.Raw)
	for _, o := range req.Options {
		n += 48 + len(o.OptionID) + len(o.Name) + len(o.Kind)
	}
	return n
}

// A permission request names its session. One for a session the client
// never created (a stranger's id, or any id before initialize is answered
// or before session/new is) is the agent's invention: no user is asked, it
// is denied at once.
func TestPermissionForAStrangerSessionIsDenied(t *testing.T) {
	asked := make(chan string, 8)
	c, a, _ := newRawClient(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			asked <- req.SessionID
			return acp.Select("yes")
		},
	})
	request := func(id int, sid string) acp.PermissionOutcome {
		t.Helper()
		a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"session/request_permission","params":{"sessionId":%q,"toolCall":{"toolCallId":"c"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`, id, sid))
		for {
			m := a.next()
			if m.IsResponse() && m.ID == acp.StringID(fmt.Sprintf("p%d", id)) {
				var res acp.RequestPermissionResponse
				if err := json.Unmarshal(m.Result, &res); err != nil {
					t.Fatalf("answer %s: %v", m.Result, err)
				}
				return res.Outcome
			}
		}
	}
	deny := acp.Select("no")

	// Before initialize is answered.
	initDone := make(chan error, 1)
	go func() { _, err := c.Initialize(context.Background()); initDone <- err }()
	initReq := a.next()
	if got := request(0, "s1"); got != deny {
		t.Errorf("request before initialize answered %+v, want %+v", got, deny)
	}
	a.reply(initReq.ID, `{"protocolVersion":1}`)
	if err := <-initDone; err != nil {
		t.Fatal(err)
	}
	// After initialize, before session/new.
	if got := request(1, "s1"); got != deny {
		t.Errorf("request before session/new answered %+v, want %+v", got, deny)
	}
	a.openSession(c, "s1")
	if got := request(2, "s2"); got != deny {
		t.Errorf("request for a stranger's session answered %+v, want %+v", got, deny)
	}
	if got := request(3, "s1"); got != acp.Select("yes") {
		t.Errorf("request for the client's session answered %+v, want the handler's", got)
	}
	close(asked)
	var got []string
	for sid := range asked {
		got = append(got, sid)
	}
	if fmt.Sprint(got) != "[s1]" {
		t.Errorf("OnPermission was asked for sessions %v, want [s1] once", got)
	}
}
