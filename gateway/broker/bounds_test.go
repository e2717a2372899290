package broker_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// watchdog is how long a test waits for what must happen before failing.
const watchdog = 20 * time.Second

// raw is a sandbox connection that speaks JSON-RPC lines by hand.
type raw struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, path string) *raw {
	t.Helper()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &raw{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (r *raw) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.nc, line+"\n"); err != nil {
		r.t.Fatalf("send: %v", err)
	}
}

// reply reads the next line, or returns the read error.
func (r *raw) reply() (map[string]any, error) {
	r.nc.SetReadDeadline(time.Now().Add(watchdog))
	line, err := r.br.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		r.t.Fatalf("reply %q: %v", line, err)
	}
	return m, nil
}

func (r *raw) mustReply() map[string]any {
	r.t.Helper()
	m, err := r.reply()
	if err != nil {
		r.t.Fatalf("no reply: %v", err)
	}
	return m
}

// initialize runs MCP's handshake.
func (r *raw) initialize() {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sandbox","version":"v0"}}}`)
	if m := r.mustReply(); m["result"] == nil {
		r.t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func callLine(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_issues","arguments":{"state":"open"}}}`, id)
}

// refusals counts the gateway's refused decisions with code.
func refusals(r *rigtest.Rig, code checkfu.Code) (n int) {
	for _, ev := range r.Evidence.Events() {
		if ev.Kind == authz.EvidenceGatewayDecision && ev.Outcome == authz.OutcomeRefused && ev.Code == code {
			n++
		}
	}
	return n
}

// TestBrokerLineBound: a line of exactly MaxLineBytes is answered; one
// byte more ends the connection and is recorded; a line that never ends
// is cut off at the bound, not buffered.
func TestBrokerLineBound(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("issues.list")
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	path := rigtest.ServeBroker(t, b)
	padded := func(id, n int) string {
		line := callLine(id)
		return line[:1] + strings.Repeat(" ", n-len(line)) + line[1:]
	}
	c := dial(t, path)
	c.initialize()
	c.send(padded(1, broker.MaxLineBytes))
	if m := c.mustReply(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("a line of MaxLineBytes: %v", m)
	}
	c.send(padded(2, broker.MaxLineBytes+1))
	if m, err := c.reply(); err == nil {
		t.Fatalf("a line of MaxLineBytes+1 was answered: %v", m)
	}
	if n := refusals(r, broker.CodeFrameTooLong); n != 1 {
		t.Errorf("%d refusals recorded with %s, want 1", n, broker.CodeFrameTooLong)
	}
	// A line that never ends: the connection ends once it passes the
	// bound, while the sandbox is still writing it.
	c = dial(t, path)
	c.initialize()
	done := make(chan error, 1)
	go func() {
		_, err := c.nc.Write([]byte(strings.Repeat(" ", 4*broker.MaxLineBytes)))
		done <- err
	}()
	if m, err := c.reply(); err == nil {
		t.Fatalf("an endless line was answered: %v", m)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("the broker read 4*MaxLineBytes of one line")
		}
	case <-time.After(watchdog):
		t.Fatal("the sandbox's write never ended")
	}
}

// TestBrokerConnectionBound: MaxConnections connections are served at
// once; one more is closed unanswered; once one ends, another is served.
func TestBrokerConnectionBound(t *testing.T) {
	r := rigtest.New(t)
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	path := rigtest.ServeBroker(t, b)
	var open []*raw
	for range broker.MaxConnections {
		c := dial(t, path)
		c.initialize()
		open = append(open, c)
	}
	extra := dial(t, path)
	io.WriteString(extra.nc, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n") // the broker may have closed it already
	if m, err := extra.reply(); err == nil {
		t.Fatalf("connection %d was answered: %v", broker.MaxConnections+1, m)
	}
	open[0].nc.Close()
	deadline := time.Now().Add(watchdog)
	for {
		c := dial(t, path)
		if _, err := io.WriteString(c.nc, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err == nil {
			if _, err := c.reply(); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no connection was served after one ended")
		}
		time.Sleep(10 * time.Millisecond) // a retry, not a synchronisation
	}
}

// hold makes the rig's provider hold every request until release gives
// it a token (or is closed), counting the requests it holds at once.
type hold struct {
	arrived chan struct{}
	release chan struct{}
	cur     atomic.Int64
	mu      sync.Mutex
	most    int64
	ended   atomic.Int64 // requests whose caller went away while held
}

func holdAt(r *rigtest.Rig) *hold {
	h := &hold{arrived: make(chan struct{}, 1024), release: make(chan struct{}, 1024)}
	f := func(req *http.Request) {
		n := h.cur.Add(1)
		h.mu.Lock()
		h.most = max(h.most, n)
		h.mu.Unlock()
		h.arrived <- struct{}{}
		select {
		case <-h.release:
		case <-req.Context().Done():
			h.ended.Add(1)
		}
		h.cur.Add(-1)
	}
	r.Hold.Store(&f)
	return h
}

func (h *hold) wait(t *testing.T) {
	t.Helper()
	select {
	case <-h.arrived:
	case <-time.After(watchdog):
		t.Fatal("no call reached the provider")
	}
}

// TestBrokerCallsInFlightBound: calls pipelined on one connection reach
// the gateway at most MaxCallsInFlight at a time, over all connections:
// while that many are held at the upstream, no other call is decided and
// a second connection's ping waits. Released, every call is answered.
func TestBrokerCallsInFlightBound(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("issues.list")
	h := holdAt(r)
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	path := rigtest.ServeBroker(t, b)
	c := dial(t, path)
	c.initialize()
	other := dial(t, path)
	other.initialize()
	const total = 3 * broker.MaxCallsInFlight
	go func() {
		var all strings.Builder
		for id := range total {
			all.WriteString(callLine(id) + "\n")
		}
		io.WriteString(c.nc, all.String())
	}()
	for range broker.MaxCallsInFlight {
		h.wait(t)
	}
	// Every slot is held: the ping waits. (An absence, so a bounded
	// wait; the broker without its bound answers in microseconds.)
	other.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	other.nc.SetReadDeadline(time.Now().Add(time.Second))
	if line, err := other.br.ReadBytes('\n'); err == nil {
		t.Errorf("a ping was answered while MaxCallsInFlight calls were held: %s", line)
	}
	if n := decided(r); n != broker.MaxCallsInFlight {
		t.Errorf("%d calls reached the gateway while MaxCallsInFlight (%d) were held", n, broker.MaxCallsInFlight)
	}
	close(h.release)
	for range total {
		if m := c.mustReply(); m["result"] == nil {
			t.Fatalf("a call: %v", m)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.most > broker.MaxCallsInFlight {
		t.Errorf("the upstream held %d calls at once, more than MaxCallsInFlight (%d)", h.most, broker.MaxCallsInFlight)
	}
}

// decided counts the gateway's approved decisions.
func decided(r *rigtest.Rig) (n int) {
	for _, ev := range r.Evidence.Events() {
		if ev.Kind == authz.EvidenceGatewayDecision && ev.Outcome == authz.OutcomeApproved {
			n++
		}
	}
	return n
}

// TestBrokerServeEndsWithContext: when Serve's context ends while a call
// is in flight at the upstream, the call is cancelled and Serve returns,
// without waiting for the upstream to answer.
func TestBrokerServeEndsWithContext(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("issues.list")
	h := holdAt(r)
	defer close(h.release)
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := broker.ListenUnix(filepath.Join(t.TempDir(), "broker.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- b.Serve(ctx, ln) }()
	c := dial(t, ln.Addr().String())
	c.initialize()
	c.send(callLine(1))
	h.wait(t)
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(watchdog):
		t.Fatal("Serve did not return while a call was in flight")
	}
	deadline := time.Now().Add(watchdog)
	for h.ended.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call in flight was never cancelled")
		}
		time.Sleep(10 * time.Millisecond) // a poll with a deadline
	}
}

// TestBrokerRecordsMalformedCalls: a tools/call the MCP session answers
// itself (before initialize, as a notification, with a name that is not
// a string, with no params) is recorded, one refusal each.
func TestBrokerRecordsMalformedCalls(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("issues.list")
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, rigtest.ServeBroker(t, b))
	c.send(callLine(1))
	if m := c.mustReply(); m["error"] == nil {
		t.Fatalf("a call before initialize: %v", m)
	}
	c.initialize()
	c.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_issues","arguments":{"state":"open"}}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call"}`)
	for range 2 {
		if m := c.mustReply(); m["error"] == nil {
			t.Fatalf("a malformed call: %v", m)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	c.mustReply()
	if n := refusals(r, broker.CodeCallMalformed); n != 4 {
		t.Errorf("%d refusals recorded with %s, want 4", n, broker.CodeCallMalformed)
	}
	for _, ev := range r.Evidence.Events() {
		if ev.Request != rigtest.Member() {
			t.Errorf("event %s carries %+v, want the channel's context", ev.Kind, ev.Request)
		}
	}
	// The well-formed call still works.
	cs, _ := serve(t, b)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_issues", Arguments: map[string]any{"state": "open"}})
	if err != nil || res.IsError {
		t.Fatalf("a call: %v %v", res, err)
	}
}

// fakeClock is a clock whose sleeps advance it at once.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	slept time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t, c.slept = c.t.Add(d), c.slept+d
	return nil
}

func (c *fakeClock) total() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}

// TestBrokerRefusalBounds: a burst of RefusalsPerSecond refusals goes
// unpaced, every later one waits for the rate; the refusal that spends
// MaxRefusals is followed by one refusals_exceeded record, the channel
// closes, and nothing more is served or recorded.
func TestBrokerRefusalBounds(t *testing.T) {
	r := rigtest.New(t)
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)}
	broker.SetClock(b, clock.now, clock.sleep)
	cs, _ := serve(t, b)
	ctx := context.Background()
	denied := "refused: " + string(authz.CodePermissionMissing)
	for i := range broker.MaxRefusals {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_issues", Arguments: map[string]any{"state": "open"}})
		if i+1 == broker.MaxRefusals && err != nil {
			continue // the budget's end closes the connection, which may come before the answer
		}
		if err != nil || text(res) != denied {
			t.Fatalf("refusal %d: %v %v", i+1, res, err)
		}
		if i+1 == broker.RefusalsPerSecond && clock.total() != 0 {
			t.Fatalf("the first %d refusals waited %s", broker.RefusalsPerSecond, clock.total())
		}
	}
	want := time.Duration(broker.MaxRefusals-broker.RefusalsPerSecond) * time.Second / broker.RefusalsPerSecond
	if got := clock.total(); got < want-time.Millisecond {
		t.Errorf("%d refusals waited %s, want at least %s", broker.MaxRefusals, got, want)
	}
	// The refusals_exceeded record follows the last refusal's answer,
	// which the client may see first: wait for it (a bound on a hung
	// broker, not a timing assertion).
	for deadline := time.Now().Add(10 * time.Second); refusals(r, broker.CodeRefusalsExceeded) == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := refusals(r, authz.CodePermissionMissing); n != broker.MaxRefusals {
		t.Errorf("%d refusals recorded, want MaxRefusals (%d)", n, broker.MaxRefusals)
	}
	if n := refusals(r, broker.CodeRefusalsExceeded); n != 1 {
		t.Errorf("%d %s records, want 1", n, broker.CodeRefusalsExceeded)
	}
	before := len(r.Evidence.Events())
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_issues", Arguments: map[string]any{"state": "open"}}); err == nil && !res.IsError {
		t.Errorf("a call after the budget was served: %v", res)
	}
	c := dial(t, rigtest.ServeBroker(t, b))
	io.WriteString(c.nc, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if m, err := c.reply(); err == nil {
		t.Errorf("a connection after the budget was answered: %v", m)
	}
	if after := len(r.Evidence.Events()); after != before {
		t.Errorf("%d records after the budget was spent", after-before)
	}
	if r.Hits.Load() != 0 {
		t.Error("the provider was contacted")
	}
}
