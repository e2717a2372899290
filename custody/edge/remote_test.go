package edge_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
)

// The package's remote MCP path end to end (a real SDK server, the
// gateway's client) is tested in package gateway (remote_test.go); these
// are the edge's own checks, against the rig's plain provider.

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func (rig *edgeRig) remote(capability string) *edge.RemoteTransport {
	rig.t.Helper()
	path := map[string]string{"mcp.search": "/v1/mcp", "mcp.echo": "/v1/echo"}[capability]
	out := rig.authorized(rig.invocation(capability, "search", "POST", path, `{}`))
	tr, err := rig.edge.Remote(checkfu.WithRequestContext(context.Background(), sendContext), out)
	if err != nil {
		rig.t.Fatal(err)
	}
	return tr
}

func mcpPost(t *testing.T, url, body string, header ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// TestRemoteAttachesAndScreens: the transport attaches the credential to
// the one allowed exchange, the caller's request never holds it, an
// answer that echoes it is withheld, and Finish records one edge_call.
func TestRemoteAttachesAndScreens(t *testing.T) {
	rig := newEdgeRig(t)
	tr := rig.remote("mcp.search")
	req := mcpPost(t, rig.base+"/v1/mcp", initialize)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	rig.mu.Lock()
	auth, url := rig.lastAuth, rig.lastURL
	rig.mu.Unlock()
	if resp.StatusCode != 200 || string(body) != `{"ok":true}` || resp.Header.Get("Set-Cookie") != "" {
		t.Fatalf("answer %d %s %v", resp.StatusCode, body, resp.Header)
	}
	if auth != "Bearer "+edgeCanary || url != "/v1/mcp" || req.Header.Get("Authorization") != "" {
		t.Fatalf("provider saw %q at %s; the caller's request holds %q", auth, url, req.Header.Get("Authorization"))
	}
	if err := tr.Finish(context.Background(), nil); err != nil {
		t.Fatal(err)
	}

	echo := rig.remote("mcp.echo")
	_, err = echo.RoundTrip(mcpPost(t, rig.base+"/v1/echo", initialize))
	wantCode(t, err, edge.CodeCredentialEchoed)
	noLeak(t, err, nil)
	ferr := echo.Finish(context.Background(), nil)
	wantCode(t, ferr, edge.CodeCredentialEchoed)

	var calls []authz.Evidence
	for _, ev := range rig.evidence.Events() {
		if ev.Kind == authz.EvidenceEdgeCall {
			calls = append(calls, ev)
		}
	}
	if len(calls) != 2 || calls[0].Outcome != authz.OutcomeSucceeded || calls[0].Status != 200 || calls[0].Request != sendContext ||
		calls[1].Outcome != authz.OutcomeFailed || calls[1].Code != edge.CodeCredentialEchoed {
		t.Fatalf("edge_call events %+v", calls)
	}
	noLeak(t, nil, rig.evidence.Events())
}

// TestRemoteRefusesBeforeContact: what the transport or the Connection's
// rules refuse reaches no server and opens no credential.
func TestRemoteRefusesBeforeContact(t *testing.T) {
	rig := newEdgeRig(t)
	for _, tc := range []struct {
		name string
		req  func() *http.Request
		code checkfu.Code
	}{
		{"another URL", func() *http.Request { return mcpPost(t, rig.base+"/v1/repos/acme/app/issues", initialize) }, edge.CodeRemoteRequestRefused},
		{"another host", func() *http.Request {
			return mcpPost(t, strings.Replace(rig.base, "api.", "elsewhere.", 1)+"/v1/mcp", initialize)
		}, edge.CodeRemoteRequestRefused},
		{"a header that is not MCP's", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", initialize, "Cookie", "a=b")
		}, edge.CodeRemoteRequestRefused},
		{"the caller's own credential", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", initialize, "Authorization", "Bearer forged")
		}, edge.CodeRemoteRequestRefused},
		{"an MCP header the rules do not list", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", initialize, "Accept", "application/json, text/event-stream")
		}, egress.CodeHeaderNotAllowed},
		// The gateway's client opens no standalone stream and never
		// resumes one, so a GET (with or without Last-Event-ID) is not an
		// exchange of its call, whatever the rules allow (they allow GET
		// here).
		{"a GET", func() *http.Request {
			req, _ := http.NewRequest("GET", rig.base+"/v1/mcp", nil)
			return req
		}, edge.CodeRemoteRequestRefused},
		{"a GET resuming a stream", func() *http.Request {
			req, _ := http.NewRequest("GET", rig.base+"/v1/mcp", nil)
			req.Header.Set("Last-Event-ID", "e1")
			return req
		}, edge.CodeRemoteRequestRefused},
		{"Last-Event-ID on a POST", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", initialize, "Last-Event-ID", "e1")
		}, edge.CodeRemoteRequestRefused},
		{"a method the rules do not allow", func() *http.Request {
			req, _ := http.NewRequest("DELETE", rig.base+"/v1/mcp", nil)
			return req
		}, egress.CodeMethodDenied},
		{"tools/list", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		}, edge.CodeRemoteRequestRefused},
		// A message without a method must be a JSON-RPC response: an id,
		// and a result or an error.
		{"an empty object", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", `{}`)
		}, edge.CodeRemoteRequestRefused},
		{"null", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", `null`)
		}, edge.CodeRemoteRequestRefused},
		{"a response without an id", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", `{"jsonrpc":"2.0","id":null,"result":{}}`)
		}, edge.CodeRemoteRequestRefused},
		{"a response with a result and an error", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", `{"jsonrpc":"2.0","id":"s1","result":{},"error":{"code":1,"message":"x"}}`)
		}, edge.CodeRemoteRequestRefused},
		{"a message of another JSON-RPC version", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", `{"jsonrpc":"1.0","id":2,"method":"ping"}`)
		}, edge.CodeRemoteRequestRefused},
		// encoding/json matches member names case-insensitively and lets
		// the last win; an MCP server reads them exactly (the Go SDK's
		// decoder is case-sensitive), so each of these is a message the
		// server would read as another one than the edge checked.
		{"tools/list behind a case variant of method", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list","METHOD":"ping"}`)
		}, edge.CodeRemoteRequestRefused},
		{"another tool behind a case variant of name", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"other","Name":"search","arguments":{}}}`)
		}, edge.CodeRemoteRequestRefused},
		{"other arguments behind a case variant of arguments", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"},"Arguments":{}}}`)
		}, edge.CodeRemoteRequestRefused},
		{"another call behind a case variant of params", func() *http.Request {
			return mcpPost(t, rig.base+"/v1/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"other","arguments":{}},"Params":{"name":"search","arguments":{}}}`)
		}, edge.CodeRemoteRequestRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := rig.remote("mcp.search")
			hits, opens := rig.hits.Load(), rig.custodian.opens.Load()
			_, err := tr.RoundTrip(tc.req())
			wantCode(t, err, tc.code)
			if rig.hits.Load() != hits || rig.custodian.opens.Load() != opens {
				t.Fatalf("a refused exchange reached the provider or opened the credential")
			}
			if ferr := tr.Finish(context.Background(), nil); !errors.Is(ferr, tc.code) {
				t.Errorf("Finish: %v, want %s", ferr, tc.code)
			}
		})
	}
}

// TestRemoteRegistrationOnPlainPath: a pipeline without a remote client
// refuses a remote MCP registration before any contact; Send refuses a
// remote one and Remote a plain one, should the pipeline ever route them
// wrong.
func TestRemoteRegistrationOnPlainPath(t *testing.T) {
	rig := newEdgeRig(t)
	inv := rig.invocation("mcp.search", "search", "POST", "/v1/mcp", `{}`)
	_, err := rig.call(context.Background(), inv)
	wantCode(t, err, authz.CodeCapabilityMismatch)
	_, err = rig.edge.Send(context.Background(), rig.authorized(inv))
	wantCode(t, err, authz.CodeCapabilityMismatch)
	_, err = rig.edge.Remote(context.Background(), rig.authorized(rig.list()))
	wantCode(t, err, authz.CodeCapabilityMismatch)
	if rig.hits.Load() != 0 || rig.custodian.opens.Load() != 0 {
		t.Fatal("a refused call reached the provider or opened the credential")
	}
	if rem, _ := rig.leases.Remaining(rig.lease.ID); rem != 100 {
		t.Errorf("lease budget %d, want 100 (nothing spent)", rem)
	}
}

// TestRemoteOneToolsCall: a transport is one authorized call, so it
// carries its tools/call once. A second, even of exactly the authorized
// tool and arguments, is refused before contact: one lease use and one
// approval stand for one effect, whatever the MCP client does.
func TestRemoteOneToolsCall(t *testing.T) {
	rig := newEdgeRig(t)
	tr := rig.remote("mcp.search")
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{}}}`
	if _, err := tr.RoundTrip(mcpPost(t, rig.base+"/v1/mcp", call)); err != nil {
		t.Fatal(err)
	}
	hits := rig.hits.Load()
	_, err := tr.RoundTrip(mcpPost(t, rig.base+"/v1/mcp", call))
	wantCode(t, err, edge.CodeRemoteRequestRefused)
	if rig.hits.Load() != hits {
		t.Errorf("the second tools/call reached the provider")
	}
	if ferr := tr.Finish(context.Background(), nil); !errors.Is(ferr, edge.CodeRemoteRequestRefused) {
		t.Errorf("Finish: %v, want %s", ferr, edge.CodeRemoteRequestRefused)
	}
}
