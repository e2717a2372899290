package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
	"github.com/checkfu/checkfu/gateway/mcpremote"
)

// remoteCall grants capability and calls it with args over a member's
// channel of a remote rig.
func remoteCall(t *testing.T, r *rigtest.Rig, capability, args string) (*edge.Response, error) {
	t.Helper()
	r.Grant(capability)
	return r.Channel(rigtest.Member()).Call(context.Background(), capability, json.RawMessage(args))
}

// TestRemoteAllowed calls a remote MCP tool through the gateway: the
// registered credential arrives at the remote server, and nothing of it,
// nor of the server's own metadata, comes back.
func TestRemoteAllowed(t *testing.T) {
	r := rigtest.NewRemote(t)
	resp, err := remoteCall(t, r, "remote.search", `{"query":"bugs"}`)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mcpremote.Result(resp)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.IsError {
		t.Fatalf("result %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "found: bugs" {
		t.Fatalf("content %#v", res.Content[0])
	}
	auth := r.Remote.Auth()
	if len(auth) < 3 {
		t.Fatalf("the remote server saw %d requests, want the handshake and the call", len(auth))
	}
	for i, a := range auth {
		if a != "Bearer "+rigtest.Canary {
			t.Errorf("request %d to the remote server carried Authorization %q, want the registered credential", i, a)
		}
	}
	if strings.Contains(string(resp.Body), r.Remote.Other) || strings.Contains(string(resp.Body), "_meta") {
		t.Errorf("the result passes on the remote server's metadata: %s", resp.Body)
	}
	noLeak(t, "the remote result", resp.Body)
	noLeak(t, "events", eventsJSON(t, r.Evidence.Events()))
	if n := r.Remote.OtherHits.Load(); n != 0 {
		t.Errorf("the server the descriptor names got %d requests, want 0", n)
	}
	decisions, results := gatewayEvents(r)
	if len(decisions) != 1 || len(results) != 1 || decisions[0].Outcome != authz.OutcomeApproved || results[0].Outcome != authz.OutcomeSucceeded {
		t.Fatalf("decisions %+v results %+v", decisions, results)
	}
	if r.Hits.Load() != 0 {
		t.Errorf("the plain provider got %d requests", r.Hits.Load())
	}
	var edgeCalls []authz.Evidence
	for _, ev := range r.Evidence.Events() {
		if ev.Kind == authz.EvidenceEdgeCall {
			edgeCalls = append(edgeCalls, ev)
		}
	}
	if len(edgeCalls) != 1 || edgeCalls[0].Outcome != authz.OutcomeSucceeded || edgeCalls[0].Status != 200 ||
		edgeCalls[0].Capability != "remote.search" || edgeCalls[0].Tool != "search" || edgeCalls[0].Request != rigtest.Member() {
		t.Errorf("edge events %+v, want one succeeded edge_call of remote.search with status 200", edgeCalls)
	}
}

// TestRemoteDenied: each refusal of the remote path. None leaks the
// credential, and none ever reaches the server a descriptor names.
func TestRemoteDenied(t *testing.T) {
	for _, tc := range []struct {
		name, capability, args string
		code                   checkfu.Code
		contact                bool // the remote server was contacted
	}{
		{"redirect", "remote.redirect", `{"query":"x"}`, egress.CodeRedirectRefused, true},
		{"endpoint outside the rules", "remote.outside", `{"query":"x"}`, egress.CodeNoRuleMatched, false},
		{"credential echoed", "remote.leak", `{}`, edge.CodeCredentialEchoed, true},
		{"remote error", "remote.unknown", `{}`, mcpremote.CodeRemoteCallFailed, true},
		{"arguments", "remote.search", `{"query":"x","url":"https://other.example.com/mcp"}`, authz.CodeArgumentsInvalid, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rigtest.NewRemote(t)
			resp, err := remoteCall(t, r, tc.capability, tc.args)
			if !errors.Is(err, tc.code) || resp != nil {
				t.Fatalf("call: %v %+v, want code %s", err, resp, tc.code)
			}
			noLeak(t, "the refusal", []byte(err.Error()))
			noLeak(t, "events", eventsJSON(t, r.Evidence.Events()))
			if n := r.Remote.OtherHits.Load(); n != 0 {
				t.Errorf("the other server got %d requests, want 0", n)
			}
			if got := r.Remote.Hits.Load() > 0; got != tc.contact {
				t.Errorf("remote server contacted: %v, want %v", got, tc.contact)
			}
			_, results := gatewayEvents(r)
			if tc.contact && (len(results) != 1 || results[0].Code != tc.code) {
				t.Errorf("results %+v, want one with code %s", results, tc.code)
			}
		})
	}
}

// TestRemoteDescriptorNamesURL: the remote server's descriptors and
// result advertise another server's URL, and a profile tool can name it
// too. The gateway never contacts it: it never asks for the remote's
// tools/list, and a profile tool whose resource is not the registration's
// is refused before any contact.
func TestRemoteDescriptorNamesURL(t *testing.T) {
	r := rigtest.NewRemote(t)
	if _, err := remoteCall(t, r, "remote.search", `{"query":"`+r.Remote.Other+`/mcp"}`); err != nil {
		t.Fatal(err)
	}
	// A profile that says the tool lives at the URL the descriptor names.
	tools := append([]gateway.ProfileTool(nil), r.Tools...)
	for i := range tools {
		if tools[i].Capability == "remote.search" {
			tools[i].Resource = r.Remote.Other + "/mcp"
		}
	}
	hits := r.Remote.Hits.Load()
	tok, err := r.Tokens.Issue(rigtest.Member(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := r.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: r.Lease.ID, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ch.Call(context.Background(), "remote.search", json.RawMessage(`{"query":"x"}`))
	if !errors.Is(err, authz.CodeCapabilityMismatch) {
		t.Fatalf("call of a profile tool at another URL: %v, want %s", err, authz.CodeCapabilityMismatch)
	}
	if n := r.Remote.Hits.Load() - hits; n != 0 {
		t.Errorf("the refused call reached the remote server %d times", n)
	}
	if n := r.Remote.OtherHits.Load(); n != 0 {
		t.Errorf("the server the descriptors name got %d requests, want 0", n)
	}
	for _, ev := range r.Evidence.Events() {
		if ev.Kind == authz.EvidenceEdgeCall && ev.Capability != "remote.search" {
			t.Errorf("edge event for %s", ev.Capability)
		}
	}
}

// remoteTransport returns the edge's transport for an authorized call of
// remote.search with args: a pipeline over the rig's parts whose remote
// client hands the transport to the test, and holds the call open until
// the test ends.
func remoteTransport(t *testing.T, r *rigtest.Rig, args string) *edge.RemoteTransport {
	t.Helper()
	got, done := make(chan *edge.RemoteTransport, 1), make(chan struct{})
	p, err := pipeline.New(pipeline.Config{
		Assignments: r.Assignments, Registry: r.Registry, Connections: []edge.Connection{r.Conn},
		Leases: r.Leases, Approvals: r.Approvals, Edge: r.Edge, Evidence: r.Evidence, Label: checkfu.LabelMock,
		Service: "runner", Name: "gateway-a", Now: r.Clock.Now,
		Remote: func(ctx context.Context, tr *edge.RemoteTransport) (*edge.Response, error) {
			got <- tr
			<-done
			return nil, errors.New("the test is over")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Grant("remote.search")
	ch, err := p.Open(rigtest.Member(), r.Lease.ID, r.Tools)
	if err != nil {
		t.Fatal(err)
	}
	finished := make(chan error, 1)
	go func() {
		_, err := ch.Call(context.Background(), "remote.search", json.RawMessage(args))
		finished <- err
	}()
	select {
	case tr := <-got:
		t.Cleanup(func() { close(done); <-finished })
		return tr
	case err := <-finished:
		t.Fatalf("the call ended before the transport was made: %v", err)
		return nil
	}
}

// TestRemoteTransportRefuses: every exchange that is not the one
// authorized call's is refused before any contact.
func TestRemoteTransportRefuses(t *testing.T) {
	r := rigtest.NewRemote(t)
	const args = `{"query":"x"}`
	call := func(name, arguments string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + arguments + `}}`
	}
	endpoint := r.Remote.Base + "/mcp"
	for _, tc := range []struct {
		name, method, url, body string
		header                  map[string]string
	}{
		{"another host", "POST", r.Remote.Other + "/mcp", call("search", args), nil},
		{"another path", "POST", r.Remote.Base + "/redirect", call("search", args), nil},
		{"a query", "POST", endpoint + "?x=1", call("search", args), nil},
		{"method", "PUT", endpoint, "", nil},
		{"Authorization from the caller", "POST", endpoint, call("search", args), map[string]string{"Authorization": "Bearer forged"}},
		{"header", "POST", endpoint, call("search", args), map[string]string{"X-Forwarded-For": "1.2.3.4"}},
		{"param header", "POST", endpoint, call("search", args), map[string]string{"Mcp-Param-Q": "x"}},
		{"Mcp-Name of another tool", "POST", endpoint, call("search", args), map[string]string{"Mcp-Name": "leak", "Mcp-Method": "tools/call"}},
		{"Mcp-Method of another method", "POST", endpoint, call("search", args), map[string]string{"Mcp-Method": "tools/list"}},
		{"another tool", "POST", endpoint, call("leak", `{}`), nil},
		{"other arguments", "POST", endpoint, call("search", `{"query":"y"}`), nil},
		{"tools/list", "POST", endpoint, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil},
		{"a duplicated member", "POST", endpoint, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"leak","name":"search","arguments":` + args + `}}`, nil},
		{"a batch", "POST", endpoint, `[` + call("search", args) + `]`, nil},
		{"a body on GET", "GET", endpoint, call("search", args), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := remoteTransport(t, r, args)
			req, err := http.NewRequest(tc.method, tc.url, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			hits, opens := r.Remote.Hits.Load(), r.Opens.Load()
			resp, err := tr.RoundTrip(req)
			if !errors.Is(err, edge.CodeRemoteRequestRefused) || resp != nil {
				t.Fatalf("RoundTrip: %v, want %s", err, edge.CodeRemoteRequestRefused)
			}
			if ferr := tr.Finish(context.Background(), nil); !errors.Is(ferr, edge.CodeRemoteRequestRefused) {
				t.Errorf("Finish after a refused exchange: %v", ferr)
			}
			if r.Remote.Hits.Load() != hits || r.Remote.OtherHits.Load() != 0 || r.Opens.Load() != opens {
				t.Errorf("a refused exchange reached a server or opened the credential")
			}
		})
	}
	t.Run("after Finish", func(t *testing.T) {
		tr := remoteTransport(t, r, args)
		if err := tr.Finish(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(call("search", args)))
		req.Header.Set("Content-Type", "application/json")
		if _, err := tr.RoundTrip(req); !errors.Is(err, edge.CodeRemoteRequestRefused) {
			t.Fatalf("RoundTrip after Finish: %v", err)
		}
	})
}

// TestRemoteTransportAttaches: the one allowed exchange carries the
// credential, attached by the edge, not by the caller.
func TestRemoteTransportAttaches(t *testing.T) {
	r := rigtest.NewRemote(t)
	tr := remoteTransport(t, r, `{"query":"x"}`)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest("POST", r.Remote.Base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"protocolVersion"`) {
		t.Fatalf("initialize: %d %s", resp.StatusCode, b)
	}
	if req.Header.Get("Authorization") != "" {
		t.Errorf("the caller's request was given the credential")
	}
	if auth := r.Remote.Auth(); len(auth) != 1 || auth[0] != "Bearer "+rigtest.Canary {
		t.Errorf("the remote server saw Authorization %q", auth)
	}
	noLeak(t, "the answer", b)
	if err := tr.Finish(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteTransportZero: the zero RemoteTransport refuses, never panics.
func TestRemoteTransportZero(t *testing.T) {
	var tr edge.RemoteTransport
	req, _ := http.NewRequest("POST", "https://mcp.example.com/mcp", nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, edge.CodeRemoteRequestRefused) {
		t.Errorf("RoundTrip: %v", err)
	}
	if err := tr.Finish(context.Background(), nil); err == nil {
		t.Error("Finish of the zero transport succeeded")
	}
}

// TestRemoteExternalEffect: a remote tool registered as external_effect
// runs only under its action-bound approval, like any other; without one
// nothing reaches the remote server, and the approval is spent once.
func TestRemoteExternalEffect(t *testing.T) {
	r := rigtest.NewRemote(t)
	r.Grant("remote.effect")
	ch := r.Channel(rigtest.Member())
	const args = `{"query":"x"}`
	if _, err := ch.Call(context.Background(), "remote.effect", json.RawMessage(args)); !errors.Is(err, authz.CodeApprovalRequired) {
		t.Fatalf("unapproved: %v, want %s", err, authz.CodeApprovalRequired)
	}
	if n := r.Remote.Hits.Load(); n != 0 {
		t.Fatalf("the unapproved call reached the remote server %d times", n)
	}
	r.ApproveCall("remote.effect", args)
	if _, err := ch.Call(context.Background(), "remote.effect", json.RawMessage(`{"query":"y"}`)); !errors.Is(err, authz.CodeApprovalRequired) {
		t.Fatalf("approval of other arguments: %v, want %s", err, authz.CodeApprovalRequired)
	}
	resp, err := ch.Call(context.Background(), "remote.effect", json.RawMessage(args))
	if err != nil || resp.Status != 200 {
		t.Fatalf("approved: %v %+v", err, resp)
	}
	if _, err := ch.Call(context.Background(), "remote.effect", json.RawMessage(args)); !errors.Is(err, authz.CodeApprovalRequired) {
		t.Fatalf("second call under a spent approval: %v", err)
	}
	var kinds []string
	for _, ev := range r.Evidence.Events() {
		kinds = append(kinds, string(ev.Kind)+":"+string(ev.Outcome))
	}
	want := "gateway_decision:refused approval_decision:approved gateway_decision:refused gateway_decision:approved edge_call:succeeded approval_result:succeeded gateway_result:succeeded gateway_decision:refused"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
}

// TestRemoteNeverResumes: a hostile server ends the tools/call's SSE
// stream without the call's response, with an event id and a retry of
// 1 ms, asking the client to reconnect with a GET and Last-Event-ID.
// The client never resumes: nothing but the handshake, the one
// tools/call and the closing DELETE reaches the server, and the call
// fails with remote_call_failed, recorded once by the edge.
func TestRemoteNeverResumes(t *testing.T) {
	r := rigtest.NewRemote(t)
	h := &hostileMCP{answer: func(w http.ResponseWriter, id json.RawMessage) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: e1\nretry: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
	}}
	r.Remote.SetHostile(h)
	_, err := remoteCall(t, r, "remote.hostile", `{"query":"x"}`)
	if !errors.Is(err, mcpremote.CodeRemoteCallFailed) {
		t.Fatalf("call: %v, want %s", err, mcpremote.CodeRemoteCallFailed)
	}
	for _, m := range h.Seen() {
		switch m {
		case "server/discover", "initialize", "notifications/initialized", "tools/call", "DELETE":
		default:
			t.Errorf("the server received %q; all it got: %q", m, h.Seen())
		}
	}
	var calls []authz.Evidence
	for _, ev := range r.Evidence.Events() {
		if ev.Kind == authz.EvidenceEdgeCall {
			calls = append(calls, ev)
		}
	}
	if len(calls) != 1 || calls[0].Outcome != authz.OutcomeFailed || calls[0].Code != mcpremote.CodeRemoteCallFailed || calls[0].Status != 200 {
		t.Errorf("edge_call events %+v, want one failed with %s and status 200", calls, mcpremote.CodeRemoteCallFailed)
	}
}

// TestRemoteEvidenceStatus: the edge_call's status is the answer that
// decided the call: the tools/call's when it was sent, otherwise the last
// exchange's. Here an older server answers server/discover with 404 and
// then refuses the credential at initialize with 401: the evidence must
// say 401, not the 404 of a step the client was right to fall back from.
func TestRemoteEvidenceStatus(t *testing.T) {
	r := rigtest.NewRemote(t)
	h := &hostileMCP{status: map[string]int{"server/discover": http.StatusNotFound, "initialize": http.StatusUnauthorized}}
	r.Remote.SetHostile(h)
	if _, err := remoteCall(t, r, "remote.hostile", `{"query":"x"}`); !errors.Is(err, mcpremote.CodeRemoteCallFailed) {
		t.Fatalf("call: %v, want %s", err, mcpremote.CodeRemoteCallFailed)
	}
	var calls []authz.Evidence
	for _, ev := range r.Evidence.Events() {
		if ev.Kind == authz.EvidenceEdgeCall {
			calls = append(calls, ev)
		}
	}
	if len(calls) != 1 || calls[0].Status != http.StatusUnauthorized || calls[0].Outcome != authz.OutcomeFailed {
		t.Errorf("edge_call events %+v, want one failed with status 401 (the server saw %q)", calls, h.Seen())
	}
}

// TestRemoteToolErrorIsAFailure: a remote tool's result flagged isError
// reaches the caller as that result, and the result and approval_result
// events record the call as failed, not as a success at HTTP 200.
func TestRemoteToolErrorIsAFailure(t *testing.T) {
	r := rigtest.NewRemote(t)
	r.Grant("remote.effect")
	ch := r.Channel(rigtest.Member())
	const args = `{"query":"fail"}`
	r.ApproveCall("remote.effect", args)
	resp, err := ch.Call(context.Background(), "remote.effect", json.RawMessage(args))
	if err != nil || !strings.Contains(string(resp.Body), `"isError":true`) {
		t.Fatalf("the caller got %+v, %v; want the error result", resp, err)
	}
	var got []string
	for _, ev := range r.Evidence.Events() {
		if ev.Kind == authz.EvidenceGatewayResult || ev.Kind == authz.EvidenceApprovalResult {
			got = append(got, fmt.Sprintf("%s:%s:%s:%d", ev.Kind, ev.Outcome, ev.Code, ev.Status))
		}
	}
	want := "approval_result:failed:remote_tool_failed:0 gateway_result:failed:remote_tool_failed:0"
	if strings.Join(got, " ") != want {
		t.Errorf("events %q\nwant   %q", got, want)
	}
}
