package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/acp/acptest"
)

// rawAgent is the agent side of a client under test, driven line by line
// by the test itself.
type rawAgent struct {
	t     *testing.T
	lines chan acp.Message
	out   *acp.Writer
}

// newRawClient connects a Client to a rawAgent over in-memory pipes.
func newRawClient(t *testing.T, cfg acp.Config) (*acp.Client, *rawAgent, *countingWriter) {
	t.Helper()
	return newRawClientVia(t, cfg, nil)
}

// newRawClientVia is newRawClient with the client's writes passing through
// via(w) before they reach the countingWriter w, when via is not nil.
func newRawClientVia(t *testing.T, cfg acp.Config, via func(io.Writer) io.Writer) (*acp.Client, *rawAgent, *countingWriter) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := &rawAgent{t: t, lines: make(chan acp.Message, 64), out: acp.NewWriter(outW, 0)}
	go func() {
		defer close(a.lines)
		r := acp.NewReader(inR, 0)
		for {
			line, err := r.ReadLine()
			if err != nil {
				return
			}
			msgs, err := acp.ParseLine(nil, line)
			if err != nil {
				t.Errorf("client wrote an invalid line %q: %v", line, err)
				return
			}
			for _, m := range msgs {
				a.lines <- m
			}
		}
	}()
	cw := newCountingWriter(inW)
	var toAgent io.Writer = cw
	if via != nil {
		toAgent = via(cw)
	}
	c := acp.NewClient(outR, struct {
		io.Writer
		io.Closer
	}{toAgent, inW}, cfg)
	t.Cleanup(func() {
		c.Close()
		outW.Close()
		inR.Close()
	})
	return c, a, cw
}

// next returns the next message the client wrote.
func (a *rawAgent) next() acp.Message {
	a.t.Helper()
	select {
	case m, ok := <-a.lines:
		if !ok {
			a.t.Fatal("client input ended")
		}
		return m
	case <-time.After(hangWatchdog):
		a.t.Fatal("watchdog: the client wrote nothing")
		panic("unreachable")
	}
}

// nextOr returns the next message the client wrote, failing the test if
// the call behind got returns first.
func (a *rawAgent) nextOr(got <-chan error) acp.Message {
	a.t.Helper()
	select {
	case m, ok := <-a.lines:
		if !ok {
			a.t.Fatal("client input ended")
		}
		return m
	case err := <-got:
		a.t.Fatalf("the pending call returned early: %v", err)
		panic("unreachable")
	}
}

func (a *rawAgent) reply(id acp.ID, result string) {
	a.t.Helper()
	if err := a.out.WriteMessage(acp.Message{ID: id, Result: json.RawMessage(result)}); err != nil {
		a.t.Fatal(err)
	}
}

func (a *rawAgent) send(line string) {
	a.t.Helper()
	if err := a.out.WriteLine([]byte(line)); err != nil {
		a.t.Fatal(err)
	}
}

// initialize runs Initialize against the raw agent.
func (a *rawAgent) initialize(c *acp.Client) {
	a.t.Helper()
	done := make(chan error, 1)
	go func() { _, err := c.Initialize(context.Background()); done <- err }()
	m := a.next()
	if m.Method != acp.MethodInitialize {
		a.t.Fatalf("first message is %q, want initialize", m.Method)
	}
	a.reply(m.ID, `{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}`)
	if err := <-done; err != nil {
		a.t.Fatal(err)
	}
}

// openSession runs NewSession against the raw agent, which answers with
// session id sid.
func (a *rawAgent) openSession(c *acp.Client, sid string) {
	a.t.Helper()
	done := make(chan error, 1)
	go func() {
		s, err := c.NewSession(context.Background(), acp.NewSessionRequest{Cwd: "/w"})
		if err == nil && s.SessionID != sid {
			err = fmt.Errorf("NewSession = %q, want %q", s.SessionID, sid)
		}
		done <- err
	}()
	m := a.next()
	if m.Method != acp.MethodSessionNew {
		a.t.Fatalf("message is %q, want session/new", m.Method)
	}
	a.reply(m.ID, fmt.Sprintf(`{"sessionId":%q}`, sid))
	if err := <-done; err != nil {
		a.t.Fatal(err)
	}
}

// TestNoSessionBeforeInitialize: session/new and session/prompt are
// refused before Initialize, and wait, writing nothing, while it is
// unanswered.
func TestNoSessionBeforeInitialize(t *testing.T) {
	c, a, cw := newRawClient(t, acp.Config{})
	// A cancelled context: the refusal must come before any wait or write.
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	if _, err := c.NewSession(done, acp.NewSessionRequest{Cwd: "/w"}); !errors.Is(err, acp.CodeClientNotInitialized) {
		t.Errorf("NewSession before Initialize = %v, want client_not_initialized", err)
	}
	if _, err := c.Prompt(done, "s", acp.TextBlock("hi")); !errors.Is(err, acp.CodeClientNotInitialized) {
		t.Errorf("Prompt before Initialize = %v, want client_not_initialized", err)
	}
	if cw.buf.Len() != 0 {
		t.Fatalf("client wrote %q before Initialize", cw.buf.String())
	}
	// While initialize is unanswered, session/new waits and writes nothing.
	initDone := make(chan error, 1)
	go func() { _, err := c.Initialize(context.Background()); initDone <- err }()
	m := a.next()
	before := cw.buf.Len()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/w"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("NewSession during initialize = %v, want it to wait (context canceled)", err)
	}
	if cw.buf.Len() != before {
		t.Fatalf("session/new was written before initialize was answered: %q", cw.buf.String()[before:])
	}
	// Once answered, session/new proceeds.
	got := make(chan error, 1)
	go func() {
		_, err := c.NewSession(context.Background(), acp.NewSessionRequest{Cwd: "/w"})
		got <- err
	}()
	a.reply(m.ID, `{"protocolVersion":1}`)
	if err := <-initDone; err != nil {
		t.Fatal(err)
	}
	s := a.next()
	if s.Method != acp.MethodSessionNew {
		t.Fatalf("got %q, want session/new", s.Method)
	}
	a.reply(s.ID, `{"sessionId":"x"}`)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

// TestFakeAgentRefusesPipelining shows the fake agent catches a client that
// pipelines: session/new sent before initialize is an error.
func TestFakeAgentRefusesPipelining(t *testing.T) {
	out, in := acptest.Start(t, &acptest.Agent{})
	w := acp.NewWriter(in, 0)
	if err := w.WriteLine([]byte(`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)); err != nil {
		t.Fatal(err)
	}
	line, err := acp.NewReader(out, 0).ReadLine()
	if err != nil || !strings.Contains(string(line), `"error"`) {
		t.Errorf("fake agent answered a pipelined session/new with %s, %v; want an error", line, err)
	}
	in.Close()
}

func TestUnsupportedProtocolVersion(t *testing.T) {
	c, a, _ := newRawClient(t, acp.Config{})
	done := make(chan error, 1)
	go func() { _, err := c.Initialize(context.Background()); done <- err }()
	a.reply(a.next().ID, `{"protocolVersion":2}`)
	if err := <-done; !errors.Is(err, acp.CodeProtocolVersionUnsupported) {
		t.Fatalf("Initialize = %v, want protocol_version_unsupported", err)
	}
	if _, err := c.NewSession(context.Background(), acp.NewSessionRequest{Cwd: "/w"}); !errors.Is(err, acp.CodeClientNotInitialized) {
		t.Errorf("NewSession after a failed initialize = %v, want client_not_initialized", err)
	}
}

// TestOutOfOrderResponses: answers arrive in the reverse order of the
// requests, and each call still gets its own.
func TestOutOfOrderResponses(t *testing.T) {
	c, a, _ := newRawClient(t, acp.Config{})
	a.initialize(c)
	const n = 8
	errs := openSessions(c, n)
	var reqs []acp.Message
	for i := 0; i < n; i++ {
		reqs = append(reqs, a.next())
	}
	for i := n - 1; i >= 0; i-- {
		var p acp.NewSessionRequest
		if err := json.Unmarshal(reqs[i].Params, &p); err != nil {
			t.Fatal(err)
		}
		a.reply(reqs[i].ID, fmt.Sprintf(`{"sessionId":"for %s"}`, p.Cwd))
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestOverlappingIDs: the agent's own requests use the same ids as the
// client's pending calls; the client answers them and still matches its
// responses.
func TestOverlappingIDs(t *testing.T) {
	var tr acptest.Transcript
	c, a, _ := newRawClient(t, acp.Config{OnPermission: tr.OnPermission})
	a.initialize(c)
	a.openSession(c, "real")
	got := make(chan error, 1)
	go func() {
		s, err := c.NewSession(context.Background(), acp.NewSessionRequest{Cwd: "/w"})
		if err == nil && s.SessionID != "second" {
			err = fmt.Errorf("session id %q, want second", s.SessionID)
		}
		got <- err
	}()
	req := a.next()
	// A permission request and an unknown method, both with the id of the
	// pending session/new.
	a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"session/request_permission","params":{"sessionId":"real","toolCall":{"toolCallId":"c1"},"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}}`, req.ID))
	perm := a.nextOr(got)
	if perm.ID != req.ID || !perm.IsResponse() || string(perm.Result) != `{"outcome":{"outcome":"selected","optionId":"ok"}}` {
		t.Fatalf("permission answer = %+v (result %s)", perm, perm.Result)
	}
	a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"fs/read_text_file","params":{"path":"/etc/passwd"}}`, req.ID))
	nf := a.nextOr(got)
	if nf.ID != req.ID || nf.Error == nil || nf.Error.Code != -32601 {
		t.Fatalf("fs/read_text_file answer = %+v, want method not found", nf)
	}
	select {
	case err := <-got:
		t.Fatalf("session/new returned before its response: %v", err)
	default:
	}
	a.reply(req.ID, `{"sessionId":"second"}`)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

// TestBadInputEndsTheClient: an over-long line, a malformed message, or a
// partial last line ends the client and fails the pending call with
// client_closed wrapping the cause.
func TestBadInputEndsTheClient(t *testing.T) {
	tests := []struct {
		name string
		line string
		want error
	}{
		{"over-long", `{"jsonrpc":"2.0","method":"session/update","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`, acp.CodeLineTooLong},
		{"malformed", `{"jsonrpc":"2.0","id":1,"result":`, acp.CodeMessageInvalid},
		{"not json-rpc", `hello from a debug print`, acp.CodeMessageInvalid},
		{"null-id error answer", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, acp.CodeMessageInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, a, _ := newRawClient(t, acp.Config{MaxLineBytes: 1024})
			a.initialize(c)
			got := make(chan error, 1)
			go func() {
				_, err := c.NewSession(context.Background(), acp.NewSessionRequest{Cwd: "/w"})
				got <- err
			}()
			a.next()
			a.send(tt.line)
			var err error
			select {
			case err = <-got:
			case <-time.After(hangWatchdog):
				t.Fatal("the pending call still waits after the bad line")
			}
			if !errors.Is(err, acp.CodeClientClosed) || !errors.Is(err, tt.want) {
				t.Errorf("pending call = %v, want client_closed wrapping %v", err, tt.want)
			}
			<-c.Done()
			if !errors.Is(c.Err(), tt.want) {
				t.Errorf("Err() = %v, want %v", c.Err(), tt.want)
			}
			if _, err := c.Prompt(context.Background(), "s"); !errors.Is(err, acp.CodeClientClosed) {
				t.Errorf("call after the end = %v, want client_closed", err)
			}
		})
	}
}

// TestCancelAnswersPendingPermission: session/cancel during a permission
// request answers it "cancelled", as ACP requires, even though the user
// (the handler) never answers.
func TestCancelAnswersPendingPermission(t *testing.T) {
	asked := make(chan string, 1)
	c, a, _ := newRawClient(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			asked <- req.SessionID
			<-ctx.Done() // a user who never answers
			return acp.Select("allow")
		},
	})
	a.initialize(c)
	a.openSession(c, "s1")
	a.send(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}}`)
	if id := <-asked; id != "s1" {
		t.Fatalf("permission for %q, want s1", id)
	}
	if err := c.Cancel("s1"); err != nil {
		t.Fatal(err)
	}
	var sawCancel, sawAnswer bool
	for !sawCancel || !sawAnswer {
		m := a.next()
		switch {
		case m.Method == acp.MethodSessionCancel && string(m.Params) == `{"sessionId":"s1"}`:
			sawCancel = true
		case m.IsResponse() && m.ID == acp.IntID(0):
			if string(m.Result) != `{"outcome":{"outcome":"cancelled"}}` {
				t.Fatalf("permission answered %s after cancel, want cancelled", m.Result)
			}
			sawAnswer = true
		default:
			t.Fatalf("unexpected message %+v", m)
		}
	}
}

// slowCancel delays each write holding a session/cancel before passing it
// on, so that anything the client does before that write returns happens
// while the line is still unwritten.
type slowCancel struct{ w io.Writer }

func (s slowCancel) Write(p []byte) (int, error) {
	if strings.Contains(string(p), acp.MethodSessionCancel) {
		time.Sleep(50 * time.Millisecond)
	}
	return s.w.Write(p)
}

// TestCancelIsWrittenBeforeThePermissionAnswers: Cancel writes
// session/cancel before it releases the session's permission requests, so
// the agent reads the notification before their "cancelled" answers. The
// other order lets the answer end the turn, the next prompt start, and the
// late session/cancel cancel that next turn instead.
func TestCancelIsWrittenBeforeThePermissionAnswers(t *testing.T) {
	var cw *countingWriter
	asked := make(chan struct{})
	released := make(chan bool, 1)
	c, a, cw := newRawClientVia(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			close(asked)
			<-ctx.Done()
			cw.mu.Lock()
			released <- strings.Contains(cw.buf.String(), acp.MethodSessionCancel)
			cw.mu.Unlock()
			return acp.Select("allow")
		},
	}, func(w io.Writer) io.Writer { return slowCancel{w} })
	a.initialize(c)
	a.openSession(c, "s1")
	a.send(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}}`)
	<-asked
	go func() { _ = c.Cancel("s1") }()
	if !<-released {
		t.Fatal("the permission request was released before session/cancel was written")
	}
	if m := a.next(); m.Method != acp.MethodSessionCancel {
		t.Fatalf("first message after Cancel is %+v, want session/cancel", m)
	}
	if m := a.next(); !m.IsResponse() || string(m.Result) != `{"outcome":{"outcome":"cancelled"}}` {
		t.Fatalf("second message after Cancel is %+v, want the cancelled answer", m)
	}
}

// TestCancelledTurnWithFakeAgent: Cancel during a turn ends it cancelled.
func TestCancelledTurnWithFakeAgent(t *testing.T) {
	asked := make(chan struct{}, 1)
	ctx, c, sid := startSession(t, &acptest.Agent{}, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			asked <- struct{}{}
			<-ctx.Done()
			return acp.Select("allow")
		},
	})
	res := make(chan *acp.PromptResponse, 1)
	go func() {
		r, err := c.Prompt(ctx, sid, acp.TextBlock("go"))
		if err != nil {
			t.Error(err)
		}
		res <- r
	}()
	<-asked
	if err := c.Cancel(sid); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r == nil || r.StopReason != acp.StopCancelled {
		t.Errorf("Prompt after Cancel = %+v, want cancelled", r)
	}
}

// TestPermissionDeniedByDefault: with no OnPermission, the client selects
// the reject option.
func TestPermissionDeniedByDefault(t *testing.T) {
	var tr acptest.Transcript
	ctx, c, sid := startSession(t, &acptest.Agent{}, acp.Config{OnUpdate: tr.OnUpdate})
	if _, err := c.Prompt(ctx, sid, acp.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	const denied = `update {"sessionUpdate":"tool_call_update","status":"failed","toolCallId":"call_1"}`
	if !contains(tr.Lines(), denied) {
		t.Errorf("transcript lacks the denied tool call:\n%s", strings.Join(tr.Lines(), "\n"))
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

// TestUpdateBurstInOrder: a burst of thousands of updates (a replay after
// a reconnect) reaches OnUpdate whole and in order, before Prompt returns.
func TestUpdateBurstInOrder(t *testing.T) {
	const chunks = 5000
	var tr acptest.Transcript
	ctx, c, sid := startSession(t, &acptest.Agent{Chunks: chunks}, acp.Config{OnUpdate: tr.OnUpdate, OnPermission: tr.OnPermission})
	if _, err := c.Prompt(ctx, sid, acp.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	var n int
	for _, l := range tr.Lines() {
		if strings.Contains(l, "agent_message_chunk") {
			want := fmt.Sprintf(`"text":"before %d"`, n)
			if n >= chunks {
				want = fmt.Sprintf(`"text":"after %d"`, n-chunks)
			}
			if !strings.Contains(l, want) {
				t.Fatalf("chunk %d is %s, want %s", n, l, want)
			}
			n++
		}
	}
	if n != 2*chunks {
		t.Errorf("got %d chunks, want %d", n, 2*chunks)
	}
}

// TestFakeAgentSecondTurnAfterCancel: a session outlives a cancelled turn.
func TestFakeAgentSecondTurnAfterCancel(t *testing.T) {
	var tr acptest.Transcript
	asked := make(chan string, 1)
	first := true
	ctx, c, sid := startSession(t, &acptest.Agent{}, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			if first {
				first = false
				asked <- req.SessionID
				<-ctx.Done()
			}
			return tr.OnPermission(ctx, req)
		},
	})
	go func() { c.Cancel(<-asked) }()
	for _, want := range []acp.StopReason{acp.StopCancelled, acp.StopEndTurn} {
		res, err := c.Prompt(ctx, sid, acp.TextBlock("go"))
		if err != nil || res.StopReason != want {
			t.Fatalf("Prompt = %+v, %v; want %s", res, err, want)
		}
	}
}
