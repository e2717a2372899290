package acptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/acp"
)

// An Agent is a scripted ACP agent. Each prompt turn sends Chunks
// agent_message_chunk updates, a tool_call, a session/request_permission
// (options "allow", allow_once, and "reject", reject_once), the tool call's
// outcome, Chunks more chunks, and ends with end_turn, or with cancelled
// after session/cancel. The zero Agent sends 2 chunks on each side.
type Agent struct {
	// Chunks is the number of message chunks before and after the
	// permission request; zero means 2.
	Chunks int
	// ChunkBytes pads each chunk's text to at least this many bytes.
	ChunkBytes int
	// MaxLineBytes bounds the agent's input and output lines; zero means
	// acp.DefaultMaxLineBytes.
	MaxLineBytes int

	mu          sync.Mutex // guards the fields below
	initialized bool
	closed      bool // the input ended: no permission answer will come
	sessions    int
	nextID      int64
	waiting     map[acp.ID]chan acp.Message // permission requests by id
	turns       map[string]chan struct{}    // by session id: the running turn's cancel channel, or nil
	wg          sync.WaitGroup
}

// Serve speaks ACP on r (the agent's stdin) and w (its stdout) until r
// ends, then waits for its running turns and returns nil. A protocol error
// on r is returned.
func (a *Agent) Serve(r io.Reader, w io.Writer) error {
	a.mu.Lock()
	a.waiting = map[acp.ID]chan acp.Message{}
	a.turns = map[string]chan struct{}{}
	a.mu.Unlock()
	in := acp.NewReader(r, a.MaxLineBytes)
	out := acp.NewWriter(w, a.MaxLineBytes)
	defer a.wg.Wait()
	defer a.abandon()
	var msgs []acp.Message
	for {
		line, err := in.ReadLine()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if msgs, err = acp.ParseLine(msgs[:0], line); err != nil {
			return err
		}
		for _, m := range msgs {
			a.handle(out, m)
		}
	}
}

// abandon releases turns blocked on a permission answer that will never
// come (the input ended).
func (a *Agent) abandon() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for id, ch := range a.waiting {
		close(ch)
		delete(a.waiting, id)
	}
}

func (a *Agent) handle(out *acp.Writer, m acp.Message) {
	switch {
	case m.IsResponse():
		a.mu.Lock()
		ch := a.waiting[m.ID]
		delete(a.waiting, m.ID)
		a.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case m.Method == acp.MethodInitialize:
		a.mu.Lock()
		a.initialized = true
		a.mu.Unlock()
		reply(out, m.ID, acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersion,
			AgentInfo: &acp.Implementation{Name: "acptest", Version: "1"}})
	case m.Method == acp.MethodSessionNew:
		a.mu.Lock()
		ok := a.initialized
		a.sessions++
		id := "session-" + strconv.Itoa(a.sessions)
		if ok {
			a.turns[id] = nil
		}
		a.mu.Unlock()
		if !ok {
			replyErr(out, m.ID, -32000, "session/new before initialize")
			return
		}
		reply(out, m.ID, acp.NewSessionResponse{SessionID: id})
	case m.Method == acp.MethodSessionPrompt:
		var p acp.PromptRequest
		_ = json.Unmarshal(m.Params, &p)
		a.mu.Lock()
		_, ok := a.turns[p.SessionID]
		cancel := make(chan struct{})
		if ok {
			a.turns[p.SessionID] = cancel
		}
		a.mu.Unlock()
		if !ok {
			replyErr(out, m.ID, -32602, "unknown session "+strconv.Quote(p.SessionID))
			return
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			reply(out, m.ID, acp.PromptResponse{StopReason: a.turn(out, p.SessionID, cancel)})
		}()
	case m.Method == acp.MethodSessionCancel:
		var c acp.CancelNotification
		_ = json.Unmarshal(m.Params, &c)
		a.mu.Lock()
		if ch := a.turns[c.SessionID]; ch != nil {
			close(ch)
			a.turns[c.SessionID] = nil
		}
		a.mu.Unlock()
	case m.IsRequest():
		replyErr(out, m.ID, -32601, "method not found: "+m.Method)
	}
}

// turn plays one prompt turn and returns its stop reason.
func (a *Agent) turn(out *acp.Writer, session string, cancel <-chan struct{}) acp.StopReason {
	n := a.Chunks
	if n == 0 {
		n = 2
	}
	for i := 0; i < n; i++ {
		a.chunk(out, session, fmt.Sprintf("before %d", i))
	}
	update(out, session, map[string]any{"sessionUpdate": "tool_call", "toolCallId": "call_1",
		"title": "Edit config", "kind": "edit", "status": "pending"})
	ch := make(chan acp.Message, 1)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return acp.StopCancelled
	}
	id := acp.IntID(a.nextID)
	a.nextID++
	a.waiting[id] = ch
	a.mu.Unlock()
	params, _ := json.Marshal(acp.RequestPermissionRequest{SessionID: session,
		ToolCall: acp.ToolCallUpdate{ToolCallID: "call_1", Title: "Edit config", Kind: "edit"},
		Options: []acp.PermissionOption{
			{OptionID: "allow", Name: "Allow", Kind: "allow_once"},
			{OptionID: "reject", Name: "Reject", Kind: "reject_once"},
		}})
	_ = out.WriteMessage(acp.Message{ID: id, Method: acp.MethodRequestPermission, Params: params})
	var res acp.RequestPermissionResponse
	select {
	case m, ok := <-ch:
		if !ok {
			return acp.StopCancelled
		}
		_ = json.Unmarshal(m.Result, &res)
	case <-cancel:
		return acp.StopCancelled
	}
	switch {
	case res.Outcome.Outcome == "cancelled":
		return acp.StopCancelled
	case res.Outcome.OptionID == "allow":
		update(out, session, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed"})
	default:
		update(out, session, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "failed"})
	}
	for i := 0; i < n; i++ {
		select {
		case <-cancel:
			return acp.StopCancelled
		default:
		}
		a.chunk(out, session, fmt.Sprintf("after %d", i))
	}
	return acp.StopEndTurn
}

func (a *Agent) chunk(out *acp.Writer, session, text string) {
	for len(text) < a.ChunkBytes {
		text += " ........"
	}
	update(out, session, map[string]any{"sessionUpdate": "agent_message_chunk",
		"content": acp.TextBlock(text)})
}

func update(out *acp.Writer, session string, u any) {
	ub, _ := json.Marshal(u)
	p, _ := json.Marshal(acp.SessionNotification{SessionID: session, Update: ub})
	_ = out.WriteMessage(acp.Message{Method: acp.MethodSessionUpdate, Params: p})
}

func reply(out *acp.Writer, id acp.ID, v any) {
	b, _ := json.Marshal(v)
	_ = out.WriteMessage(acp.Message{ID: id, Result: b})
}

func replyErr(out *acp.Writer, id acp.ID, code int, msg string) {
	_ = out.WriteMessage(acp.Message{ID: id, Error: &acp.RPCError{Code: code, Message: msg}})
}

// Start runs a on in-memory pipes and returns the client's ends: agentOut,
// the agent's output, and agentIn, its input (closing agentIn ends the
// agent). The agent is stopped, and its Serve error reported, at cleanup.
func Start(t testing.TB, a *Agent) (agentOut io.Reader, agentIn io.WriteCloser) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := a.Serve(inR, outW)
		outW.CloseWithError(io.EOF)
		done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		if err := <-done; err != nil {
			t.Errorf("acptest: agent: %v", err)
		}
	})
	return outR, inW
}
