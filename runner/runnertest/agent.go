package runnertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/egress"
)

// AgentEnv is the environment variable that puts a program calling Main
// into agent mode.
const AgentEnv = "CHECKFU_SCRIPTED_AGENT"

// SocketEnv names the broker socket; it is runner.BrokerSocketEnv (this
// package cannot import the runner it tests).
const SocketEnv = "CHECKFU_BROKER_SOCKET"

// ScriptEnv, when set, holds the Script Main plays instead of
// QuickstartScript, as a JSON array of steps ({"Tool": ..., "Arguments":
// {...}, "Ask": true}).
const ScriptEnv = "CHECKFU_SCRIPTED_AGENT_SCRIPT"

// EagerEnv, when "1", makes Main play its script once as soon as it
// starts, before it reads any ACP message, writing "eager: connecting"
// and then "eager: called TOOL" for each call answered to stderr: a
// process that tries the broker before the Runner has checked it.
const EagerEnv = "CHECKFU_SCRIPTED_AGENT_EAGER"

// Name is the agentInfo name of the scripted agent.
const Name = "checkfu-scripted-agent"

// A Step is one tool call of a Script. With Ask, the agent first asks
// the client's permission with session/request_permission (title the
// tool, rawInput the arguments) and calls the tool only when allowed.
type Step struct {
	Tool      string
	Arguments map[string]any
	Ask       bool
	// Attempt, when set, says what the step tries, for the agent's
	// report line ("TOOL (ATTEMPT) -> ...").
	Attempt string `json:",omitempty"`
	// Title, when set with Ask, is the title the permission request
	// names instead of Tool: the name a third-party agent's model sees
	// for the tool (mcp__checkfu__list_issues).
	Title string `json:",omitempty"`
	// Announce, when set with Ask, makes the agent first announce the
	// call (session/update tool_call) under the id it then asks with,
	// titled Announce with rawInput {"server": "checkfu", "tool": Tool,
	// "arguments": Arguments}, and ask with a rawInput that names no
	// tool: as codex-acp does.
	Announce string `json:",omitempty"`
	// Session, when set with Ask, is the session id the permission
	// request names instead of the agent's own: a foreign session.
	Session string `json:",omitempty"`
	// Kind, when set with Ask, is the ACP tool kind the permission
	// request names instead of "edit"; Locations are the paths of its
	// locations.
	Kind      string   `json:",omitempty"`
	Locations []string `json:",omitempty"`
	// Own, with Ask, makes the step the agent's own tool, as a
	// third-party agent's file read is: it asks permission, reports the
	// answer, and calls nothing through the broker.
	Own bool `json:",omitempty"`
	// Get, when set, makes the step an HTTP GET of this URL instead of a
	// tool call: through the proxy the environment names (a jail's
	// allowlist relay), or, with Direct, on a TCP connection of its own
	// that ignores the proxy. The agent says the status it got ("GET URL
	// -> 403 host_not_allowed", the guard's refusal code when the answer
	// carries one) or why it got none. A script of Get steps alone
	// never connects to the broker.
	Get    string `json:",omitempty"`
	Direct bool   `json:",omitempty"`
}

// GetTimeout bounds one Get step: the connection, the request and the
// answer's headers.
const GetTimeout = 10 * time.Second

// get plays a Get step and returns what the agent says of it.
func get(ctx context.Context, st Step) string {
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment}
	name := "GET " + st.Get
	if st.Direct {
		tr.Proxy = nil
		name += " (ignoring the proxy)"
	}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, GetTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.Get, nil)
	if err != nil {
		return name + " -> not sent: " + checkfu.Quote(err.Error())
	}
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return name + " -> no answer: " + checkfu.Quote(err.Error())
	}
	resp.Body.Close()
	status := strconv.Itoa(resp.StatusCode)
	if code := resp.Header.Get(egress.RefusalHeader); code != "" {
		// The header may come from any upstream the guard let through:
		// a code is said as it is, anything else quoted.
		if !isCode(code) {
			code = checkfu.Quote(code)
		}
		status += " " + code
	}
	return name + " -> " + status
}

// maxCodeBytes bounds a refusal code said as it is.
const maxCodeBytes = 64

// isCode reports whether s looks like a refusal code: 1 to maxCodeBytes
// of a-z, 0-9 and '_'.
func isCode(s string) bool {
	if s == "" || len(s) > maxCodeBytes {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// QuickstartScript is the turn examples/quickstart plays: an allowed
// read, a header smuggle attempt (an Authorization header hidden in the
// tool's arguments, which its schema refuses before any provider
// contact), and an external effect asked for and then made.
var QuickstartScript = []Step{
	{Tool: "list_issues", Arguments: map[string]any{"state": "open"}},
	{Tool: "list_issues", Arguments: map[string]any{"state": "open", "headers": map[string]any{"Authorization": "Bearer smuggled-by-the-agent"}},
		Attempt: "smuggling an Authorization header in its arguments"},
	{Tool: "create_issue", Arguments: map[string]any{"title": "Found by the quickstart"}, Ask: true},
}

// Main runs the scripted agent with QuickstartScript (or ScriptEnv's) on
// the process's stdin and stdout, the broker socket named by SocketEnv,
// and returns the exit code: 0 when stdin ended cleanly.
func Main() int {
	a := &Agent{Socket: os.Getenv(SocketEnv), Script: QuickstartScript}
	if s := os.Getenv(ScriptEnv); s != "" {
		a.Script = nil
		if err := json.Unmarshal([]byte(s), &a.Script); err != nil {
			fmt.Fprintln(os.Stderr, "scripted agent:", ScriptEnv, "is not a script:", err)
			return 2
		}
	}
	if os.Getenv(EagerEnv) == "1" {
		a.eager()
	}
	if err := a.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scripted agent:", err)
		return 1
	}
	return 0
}

// An Agent is the scripted agent. Each prompt turn plays Script: every
// step's outcome is reported as an agent_message_chunk ("[scripted]
// TOOL -> TEXT"), and the turn ends with end_turn.
type Agent struct {
	Socket string
	Script []Step

	out      *acp.Writer
	mu       sync.Mutex // guards the fields below
	nextID   int64
	sessions int
	door     []string // the stdio MCP server session/new announced, if any
	// cancelled is set by session/cancel: the turn ends cancelled at its
	// next step.
	cancelled bool
	waiting   map[acp.ID]chan acp.Message
	wg        sync.WaitGroup
}

// Serve speaks ACP on r and w until r ends.
func (a *Agent) Serve(r io.Reader, w io.Writer) error {
	a.out = acp.NewWriter(w, 0)
	a.waiting = map[acp.ID]chan acp.Message{}
	in := acp.NewReader(r, 0)
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
			a.handle(m)
		}
	}
}

func (a *Agent) abandon() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, ch := range a.waiting {
		close(ch)
		delete(a.waiting, id)
	}
}

func (a *Agent) handle(m acp.Message) {
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
		a.reply(m.ID, acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersion,
			AgentInfo: &acp.Implementation{Name: Name, Title: "scripted agent (no model)", Version: "1"}})
	case m.Method == acp.MethodSessionNew:
		var p struct {
			MCPServers []struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		_ = json.Unmarshal(m.Params, &p)
		a.mu.Lock()
		if len(p.MCPServers) > 0 && p.MCPServers[0].Command != "" {
			a.door = append([]string{p.MCPServers[0].Command}, p.MCPServers[0].Args...)
		}
		a.sessions++
		id := fmt.Sprintf("scripted-%d", a.sessions)
		a.mu.Unlock()
		a.reply(m.ID, acp.NewSessionResponse{SessionID: id})
	case m.Method == acp.MethodSessionPrompt:
		var p acp.PromptRequest
		_ = json.Unmarshal(m.Params, &p)
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.reply(m.ID, acp.PromptResponse{StopReason: a.turn(p.SessionID)})
		}()
	case m.Method == acp.MethodSessionCancel:
		a.mu.Lock()
		a.cancelled = true
		a.mu.Unlock()
	case m.IsRequest():
		_ = a.out.WriteMessage(acp.Message{ID: m.ID, Error: &acp.RPCError{Code: -32601, Message: "method not found"}})
	}
}

// turn plays the script once.
func (a *Agent) turn(session string) acp.StopReason {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if len(a.Script) > 0 && !slices.ContainsFunc(a.Script, func(st Step) bool { return st.Get == "" }) {
		// Requests of its own only: no broker to reach.
		for _, st := range a.Script {
			a.say(session, get(ctx, st))
		}
		return acp.StopEndTurn
	}
	cs, err := a.connect(ctx)
	if err != nil {
		a.say(session, "cannot reach the broker: "+err.Error())
		// It still asks for the effects it would make: the client
		// answers a permission request without a broker too.
		for i, st := range a.Script {
			if !st.Ask {
				continue
			}
			ok, err := a.ask(session, i, st)
			if err != nil {
				return acp.StopCancelled
			}
			a.say(session, fmt.Sprintf("%s -> permitted by the client: %t (no broker to call it through)", st.Tool, ok))
		}
		return acp.StopEndTurn
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		a.say(session, "tools/list failed: "+err.Error())
		return acp.StopEndTurn
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	if a.stdioServer() != nil {
		a.say(session, "tools/list through the announced MCP server -> "+strings.Join(names, ", "))
	} else {
		a.say(session, "tools/list -> "+strings.Join(names, ", "))
	}
	for i, st := range a.Script {
		if st.Get != "" {
			a.say(session, get(ctx, st))
			continue
		}
		name := st.Tool
		if st.Attempt != "" {
			name += " (" + st.Attempt + ")"
		}
		if st.Ask {
			ok, err := a.ask(session, i, st)
			a.mu.Lock()
			cancelled := a.cancelled
			a.mu.Unlock()
			if err != nil || cancelled {
				if ok {
					// The client answered after the cancel: what it
					// said is told, so that a test sees it.
					a.say(session, name+" -> permitted by the client after the cancel")
				}
				return acp.StopCancelled
			}
			if !ok {
				a.say(session, name+" -> not permitted by the client")
				continue
			}
			a.say(session, name+" -> permitted by the client")
			if st.Own {
				continue
			}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: st.Tool, Arguments: st.Arguments})
		if err != nil {
			a.say(session, name+" -> MCP error: "+err.Error())
			continue
		}
		var parts []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				parts = append(parts, t.Text)
			}
		}
		a.say(session, name+" -> "+strings.Join(parts, "\n"))
	}
	return acp.StopEndTurn
}

// eager plays the script without ACP, reporting on stderr.
func (a *Agent) eager() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fmt.Fprintln(os.Stderr, "eager: connecting")
	cs, err := a.connect(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "eager:", err)
		return
	}
	defer cs.Close()
	for _, st := range a.Script {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: st.Tool, Arguments: st.Arguments}); err == nil {
			fmt.Fprintln(os.Stderr, "eager: called", st.Tool)
		}
	}
}

// stdioServer returns the command of the stdio MCP server session/new
// announced, or nil.
func (a *Agent) stdioServer() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.door
}

// connect connects to the session's tools: through the stdio MCP server
// session/new announced, as a third-party agent does, else the broker
// socket named by SocketEnv.
func (a *Agent) connect(ctx context.Context) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: Name, Version: "1"}, nil)
	if door := a.stdioServer(); door != nil {
		return client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(door[0], door[1:]...)}, nil)
	}
	if a.Socket == "" {
		return nil, errors.New(SocketEnv + " is not set")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", a.Socket)
	if err != nil {
		return nil, err
	}
	return client.Connect(ctx, &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
}

// ask sends session/request_permission for step i and reports whether the
// client allowed it.
func (a *Agent) ask(session string, i int, st Step) (bool, error) {
	callID := fmt.Sprintf("call_%d", i)
	title := st.Tool
	if st.Title != "" {
		title = st.Title
	}
	call := map[string]any{"toolCallId": callID, "title": title, "kind": "edit", "rawInput": st.Arguments}
	// own adds the step's Kind and Locations to call.
	own := func(call map[string]any) {
		if st.Kind != "" {
			call["kind"] = st.Kind
		}
		if len(st.Locations) > 0 {
			locs := make([]map[string]any, len(st.Locations))
			for i, p := range st.Locations {
				locs[i] = map[string]any{"path": p}
			}
			call["locations"] = locs
		}
	}
	own(call)
	raw, _ := json.Marshal(call)
	if st.Announce != "" {
		u, _ := json.Marshal(map[string]any{"sessionUpdate": "tool_call", "toolCallId": callID, "title": st.Announce, "status": "in_progress",
			"rawInput": map[string]any{"server": "checkfu", "tool": st.Tool, "arguments": st.Arguments}})
		p, _ := json.Marshal(acp.SessionNotification{SessionID: session, Update: u})
		if err := a.out.WriteMessage(acp.Message{Method: acp.MethodSessionUpdate, Params: p}); err != nil {
			return false, err
		}
		call = map[string]any{"toolCallId": callID, "title": title, "rawInput": map[string]any{"server_name": "checkfu"}}
		own(call)
		raw, _ = json.Marshal(call)
	}
	ch := make(chan acp.Message, 1)
	a.mu.Lock()
	id := acp.IntID(a.nextID)
	a.nextID++
	a.waiting[id] = ch
	a.mu.Unlock()
	if st.Session != "" {
		session = st.Session
	}
	params, _ := json.Marshal(struct {
		SessionID string                 `json:"sessionId"`
		ToolCall  json.RawMessage        `json:"toolCall"`
		Options   []acp.PermissionOption `json:"options"`
	}{session, raw, []acp.PermissionOption{
		{OptionID: "allow", Name: "Allow", Kind: "allow_once"},
		{OptionID: "reject", Name: "Reject", Kind: "reject_once"},
	}})
	if err := a.out.WriteMessage(acp.Message{ID: id, Method: acp.MethodRequestPermission, Params: params}); err != nil {
		return false, err
	}
	m, ok := <-ch
	if !ok {
		return false, io.ErrUnexpectedEOF
	}
	var res acp.RequestPermissionResponse
	if err := json.Unmarshal(m.Result, &res); err != nil {
		return false, err
	}
	return res.Outcome.Outcome == "selected" && res.Outcome.OptionID == "allow", nil
}

// say sends one agent_message_chunk, marked as scripted.
func (a *Agent) say(session, text string) {
	u, _ := json.Marshal(map[string]any{"sessionUpdate": "agent_message_chunk", "content": acp.TextBlock("[scripted] " + text)})
	p, _ := json.Marshal(acp.SessionNotification{SessionID: session, Update: u})
	_ = a.out.WriteMessage(acp.Message{Method: acp.MethodSessionUpdate, Params: p})
}

func (a *Agent) reply(id acp.ID, v any) {
	b, _ := json.Marshal(v)
	_ = a.out.WriteMessage(acp.Message{ID: id, Result: b})
}

// ScriptArg returns the ScriptEnv entry ("NAME=JSON") that makes Main
// play script. It panics if a step's arguments do not encode as JSON.
func ScriptArg(script []Step) string {
	b, err := json.Marshal(script)
	if err != nil {
		panic(err)
	}
	return ScriptEnv + "=" + string(b)
}
