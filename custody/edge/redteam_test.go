package edge_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
)

// The red team's attacks on the outbound edge (docs/changes/wt-rtpipe.md).

// TestZeroRemoteTransportNeitherPanicsNorSends: a RemoteTransport that
// Edge.Remote did not make (nil, or the zero value) reports no endpoint,
// tool or arguments, sends nothing and finishes with a refusal; none of
// its exported methods panics.
func TestZeroRemoteTransportNeitherPanicsNorSends(t *testing.T) {
	for _, tr := range []*edge.RemoteTransport{nil, {}} {
		if tr.Endpoint() != "" || tr.Tool() != "" || tr.Arguments() != nil {
			t.Errorf("%p: a transport no edge made reports an endpoint, tool or arguments", tr)
		}
		req, err := http.NewRequest("POST", "https://api.example.com/v1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := tr.RoundTrip(req); resp != nil || err == nil {
			t.Errorf("%p: RoundTrip = %v, %v; want a refusal", tr, resp, err)
		}
		if err := tr.Finish(context.Background(), nil); err == nil {
			t.Errorf("%p: Finish succeeded", tr)
		}
	}
}

// TestHostileUpstreamEchoes: a provider that echoes the credential it
// was sent by way of the wire itself: the token split across chunks, in
// a header name, in a trailer, in the status line's reason phrase, in an
// informational (1xx) answer's headers, in a body compressed under a
// coding spelt otherwise, and written as HTML5 named references. Each is
// withheld, or never reaches the caller; nothing of the token is in the
// answer, the error or the events.
func TestHostileUpstreamEchoes(t *testing.T) {
	cut := len(edgeCanary) / 2
	for _, c := range []struct {
		name    string
		handler func(w http.ResponseWriter, tok string)
		code    checkfu.Code // "" when the answer passes, without the token
	}{
		{"split across chunks", func(w http.ResponseWriter, tok string) {
			io.WriteString(w, `{"you_sent":"`+tok[:cut])
			w.(http.Flusher).Flush()
			io.WriteString(w, tok[cut:]+`"}`)
		}, edge.CodeCredentialEchoed},
		{"header name", func(w http.ResponseWriter, tok string) {
			w.Header()["X-"+tok] = []string{"1"}
		}, edge.CodeCredentialEchoed},
		{"trailer", func(w http.ResponseWriter, tok string) {
			w.Header().Set("Trailer", "X-Echo")
			io.WriteString(w, `{"ok":true}`)
			w.Header().Set("X-Echo", tok)
		}, ""},
		{"reason phrase", func(w http.ResponseWriter, tok string) {
			conn, bw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			fmt.Fprintf(bw, "HTTP/1.1 200 %s\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", tok)
			bw.Flush()
			conn.Close()
		}, ""},
		{"103 Early Hints", func(w http.ResponseWriter, tok string) {
			w.Header().Set("Link", "<https://x.example/?k="+tok+">; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			io.WriteString(w, `{"ok":true}`)
		}, ""},
		{"x-gzip", func(w http.ResponseWriter, tok string) {
			w.Header().Set("Content-Encoding", "x-gzip")
			writeGzip(w, tok)
		}, edge.CodeResponseEncoded},
		{"GZIP", func(w http.ResponseWriter, tok string) {
			w.Header().Set("Content-Encoding", "GZIP")
			writeGzip(w, tok)
		}, edge.CodeResponseEncoded},
		{"identity, then gzip", func(w http.ResponseWriter, tok string) {
			w.Header()["Content-Encoding"] = []string{"identity", "gzip"}
			writeGzip(w, tok)
		}, edge.CodeResponseEncoded},
		{"HTML5 names", func(w http.ResponseWriter, tok string) {
			io.WriteString(w, "<p>bad key "+strings.ReplaceAll(tok, "_", "&lowbar;")+"</p>")
		}, edge.CodeCredentialEchoed},
	} {
		t.Run(c.name, func(t *testing.T) {
			rig := newEdgeRig(t)
			rig.hostile = func(w http.ResponseWriter, r *http.Request) {
				c.handler(w, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			}
			resp, err := rig.call(context.Background(), rig.invocation("hostile", "hostile", "GET", "/v1/hostile", `{}`))
			noLeak(t, err, resp)
			noLeak(t, nil, rig.evidence.Events())
			if c.code == "" {
				if err != nil {
					t.Fatalf("%v, want the answer without the token", err)
				}
				return
			}
			wantCode(t, err, c.code)
		})
	}
}

// writeGzip writes s gzip-compressed, declaring nothing.
func writeGzip(w http.ResponseWriter, s string) {
	zw := gzip.NewWriter(w)
	io.WriteString(zw, `{"you_sent":"`+s+`"}`)
	zw.Close()
}

// recordingEdge hands every value the pipeline gives the edge to a test
// before the real edge takes it.
type recordingEdge struct {
	*edge.Edge
	seen []any
}

func (r *recordingEdge) Send(ctx context.Context, a edge.Authorized) (*edge.Response, error) {
	r.seen = append(r.seen, a, &a)
	resp, err := r.Edge.Send(ctx, a)
	r.seen = append(r.seen, resp, err)
	return resp, err
}

func (r *recordingEdge) Remote(ctx context.Context, a edge.Authorized) (*edge.RemoteTransport, error) {
	r.seen = append(r.seen, a)
	t, err := r.Edge.Remote(ctx, a)
	r.seen = append(r.seen, t, err)
	return t, err
}

// TestExportedValuesPrintNoSecret: every value of the call path a caller
// can hold (the Authorized value, the Edge, its config, the remote
// transport, the Response, the errors, the pipeline and its Channel, the
// events) printed with %v, %+v and %#v and encoded as JSON holds nothing
// of the credential, after an allowed call, an echoed one and a remote
// one.
func TestExportedValuesPrintNoSecret(t *testing.T) {
	rig := newEdgeRig(t)
	rec := &recordingEdge{Edge: rig.edge}
	assignments := &authz.Assignments{}
	var tools []pipeline.Tool
	for _, c := range []struct{ capability, tool, op, path string }{
		{"issues.list", "list_issues", "GET", "/v1/repos/acme/app/issues"}, {"echo", "echo", "GET", "/v1/echo"}, {"mcp.search", "search", "POST", "/v1/mcp"},
	} {
		if _, err := assignments.Assign(authz.PermissionAssignment{Actor: govScope.Actor, Capability: c.capability, Tenant: "org-1", Workspace: "ws-1", ExpiresAt: rig.clock.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		tools = append(tools, pipeline.Tool{Capability: c.capability, Tool: c.tool, Operation: c.op, Resource: rig.base + c.path})
	}
	cfg := pipeline.Config{
		Assignments: assignments, Registry: rig.registry, Connections: []edge.Connection{rig.conn}, Leases: rig.leases, Approvals: rig.approvals,
		Edge: rec, Evidence: rig.evidence, Label: checkfu.LabelMock, Service: govScope.Service, Name: govScope.Gateway, Now: rig.clock.Now,
		Remote: func(ctx context.Context, tr *edge.RemoteTransport) (*edge.Response, error) {
			rec.seen = append(rec.seen, tr)
			return &edge.Response{Status: 200, Body: []byte(`{"content":[]}`)}, nil
		},
	}
	p, err := pipeline.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := checkfu.RequestContext{Actor: govScope.Actor, Tenant: "org-1", Workspace: "ws-1", Session: "s1", Request: "req-1", Release: "checkfu@test"}
	ch, err := p.Open(rc, rig.lease.ID, tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	for _, c := range []string{"issues.list", "echo", "mcp.search"} {
		resp, err := ch.Call(context.Background(), c, json.RawMessage(`{}`))
		rec.seen = append(rec.seen, resp, err)
	}
	if len(rec.seen) < 10 {
		t.Fatalf("%d values seen, want the three calls' (the test proves nothing)", len(rec.seen))
	}
	rec.seen = append(rec.seen, rig.edge, cfg, p, ch, rig.evidence.Events())
	for i, v := range rec.seen {
		if err, ok := v.(error); ok {
			noLeak(t, err, nil)
			continue
		}
		noLeak(t, nil, v)
		if s := fmt.Sprintf("%v", v); strings.Contains(s, edgeCanary) {
			t.Errorf("value %d: %%v holds the credential", i)
		}
	}
}
