package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/internal/alloctest"
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
		{"configured", 256 << 10, 32 << 10, 0, 16},
		// 2.9 KiB held each from 180 bytes on the wire.
		{"options count", 4 << 10, 0, 60, 4},
		{"one over the bound", 1 << 10, 2 << 10, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bound := tt.bound
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

// Decoding a permission request's options holds 48 bytes for each 3 bytes
// of "{}," on the line: one 16 MiB line would allocate 268 MiB before any
// bound on pending requests applies. A request offering more than 64
// options is answered "cancelled" without decoding them or asking the
// handler; one with 64 is asked. TotalAlloc counts the whole process, so
// the test runs alone in a child process (alloctest.Alone).
func TestPermissionOptionsAreBoundedBeforeDecoding(t *testing.T) {
	if !alloctest.Alone(t) {
		return
	}
	asked := make(chan int, 4)
	c, a, _ := newRawClient(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			asked <- len(req.Options)
			return acp.Select("yes")
		},
	})
	a.initialize(c)
	a.openSession(c, "s")
	request := func(id, options int) acp.RequestPermissionResponse {
		t.Helper()
		a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[%s{"optionId":"yes","name":"Yes","kind":"allow_once"}]}}`, id, strings.Repeat(`{"optionId":"x","name":"X","kind":"allow_once"},`, options-1)))
		m := a.next()
		var res acp.RequestPermissionResponse
		if err := json.Unmarshal(m.Result, &res); err != nil || m.ID != acp.IntID(int64(id)) {
			t.Fatalf("answer %+v: %v", m, err)
		}
		return res
	}
	if res := request(1, 64); res.Outcome != acp.Select("yes") || <-asked != 64 {
		t.Fatalf("a request with 64 options was answered %+v, want the handler's", res.Outcome)
	}
	if res := request(2, 65); res.Outcome != acp.CancelledOutcome() {
		t.Fatalf("a request with 65 options was answered %+v, want cancelled", res.Outcome)
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const line = 2 << 20
	a.send(`{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[` + strings.Repeat(`{},`, line/3) + `{}]}}`)
	if m := a.next(); string(m.Result) != `{"outcome":{"outcome":"cancelled"}}` {
		t.Fatalf("a request with %d options was answered %s, want cancelled", line/3, m.Result)
	}
	runtime.ReadMemStats(&after)
	// Measured at 4 MiB: 388 MB allocated when the options are decoded,
	// 54 MB (the test's own copies, and the client reading, parsing and
	// counting the line) when they are only counted.
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("a %d-byte request allocated %d bytes", line, got)
	}
	select {
	case n := <-asked:
		t.Fatalf("the handler was asked about a request with %d options", n)
	default:
	}
}

// A member that differs from a declared one only in case is refused in
// params: {"sessionId":"s1","SessionID":"s2"} would read as session s2 to
// encoding/json and as s1 to an exact reader. The request is answered with
// an error and no user is asked.
func TestPermissionWithCaseVariantMemberIsRefused(t *testing.T) {
	asked := make(chan string, 4)
	c, a, _ := newRawClient(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			asked <- req.SessionID
			return acp.Select("yes")
		},
	})
	a.initialize(c)
	a.openSession(c, "s1")
	a.openSession(c, "s2")
	a.send(`{"jsonrpc":"2.0","id":"p","method":"session/request_permission","params":{"sessionId":"s1","SessionID":"s2","toolCall":{"toolCallId":"c"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"}]}}`)
	for {
		m := a.next()
		if m.IsResponse() && m.ID == acp.StringID("p") {
			if m.Error == nil {
				t.Errorf("case-variant member answered %s, want an error", m.Result)
			}
			break
		}
	}
	close(asked)
	for sid := range asked {
		t.Errorf("OnPermission was asked for session %q", sid)
	}
}
