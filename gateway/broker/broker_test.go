package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// tap records every byte the sandbox side reads from the broker.
type tap struct {
	net.Conn
	mu  sync.Mutex
	got bytes.Buffer
}

func (t *tap) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	t.mu.Lock()
	t.got.Write(p[:n])
	t.mu.Unlock()
	return n, err
}

func (t *tap) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.got.Bytes())
}

// serve starts b on a Unix socket in a fresh directory and connects an MCP
// client to it as sandbox code would.
func serve(t *testing.T, b *broker.Broker) (*mcp.ClientSession, *tap) {
	t.Helper()
	conn, err := net.Dial("unix", rigtest.ServeBroker(t, b))
	if err != nil {
		t.Fatal(err)
	}
	tp := &tap{Conn: conn}
	client := mcp.NewClient(&mcp.Implementation{Name: "sandbox", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: tp, Writer: tp}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, tp
}

func noLeak(t *testing.T, what string, b []byte) {
	t.Helper()
	if leaks := custodytest.FindLeaks([]byte(rigtest.Canary), b); len(leaks) > 0 {
		t.Fatalf("%s leaks the credential as %v", what, leaks)
	}
	// The model key too: the model route's tests call noLeak on what the
	// agent read (it once looked for the tool credential alone there).
	if leaks := custodytest.FindLeaks([]byte(rigtest.ModelCanary), b); len(leaks) > 0 {
		t.Fatalf("%s leaks the model key as %v", what, leaks)
	}
}

func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestBrokerListsProfileToolsOnly: tools/list is the profile's canonical
// descriptors, names, descriptions and schemas, and nothing about the
// provider: no resource, no host, no credential reference.
func TestBrokerListsProfileToolsOnly(t *testing.T) {
	r := rigtest.New(t)
	r.Tools = r.Tools[:2] // the profile allows list_issues and create_issue
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	cs, tp := serve(t, b)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"create_issue", "list_issues"}) && !slices.Equal(names, []string{"list_issues", "create_issue"}) {
		t.Fatalf("tools/list = %v", names)
	}
	seen := tp.bytes()
	for _, protected := range []string{"api.example.com", "/v1/repos", rigtest.Cred.String(), rigtest.Cred.Handle.String(), r.Lease.ID, "echo", "outside"} {
		if bytes.Contains(seen, []byte(protected)) {
			t.Errorf("the broker showed sandbox code %q", protected)
		}
	}
	noLeak(t, "tools/list", seen)
}

// TestBrokerCallAllowedAndDenied drives an allowed and a denied call
// through the broker and runs the canary finder over every byte the
// broker sent.
func TestBrokerCallAllowedAndDenied(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("issues.list")
	r.Grant("echo")
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	cs, tp := serve(t, b)
	ctx := context.Background()
	// The sandbox tries to claim another identity in _meta and in the
	// arguments: neither reaches the context.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_issues", Arguments: map[string]any{"state": "open"},
		Meta: mcp.Meta{"actor": "user:admin", "tenant": "org-2"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || text(res) != `{"issues":[{"n":1}]}` {
		t.Fatalf("allowed call = %v %q", res.IsError, text(res))
	}
	for name, args := range map[string]any{
		"create_issue": map[string]any{"title": "x"},          // no assignment
		"outside":      map[string]any{},                      // no assignment
		"list_issues":  map[string]any{"actor": "user:admin"}, // outside the schema
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := "refused: " + string(authz.CodePermissionMissing)
		if name == "list_issues" {
			want = "refused: " + string(authz.CodeArgumentsInvalid)
		}
		if !res.IsError || text(res) != want {
			t.Errorf("%s: %v %q, want %q", name, res.IsError, text(res), want)
		}
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || text(res) != "refused: credential_echoed" {
		t.Errorf("echo: %v %q", res.IsError, text(res))
	}
	// A tool the broker does not list is refused by the gateway exactly as
	// a listed tool without a permission, and the denial is recorded.
	denials := func() (n int) {
		for _, ev := range r.Evidence.Events() {
			if ev.Kind == authz.EvidenceGatewayDecision && ev.Outcome == authz.OutcomeRefused && ev.Code == authz.CodePermissionMissing {
				n++
			}
		}
		return n
	}
	before := denials()
	for _, name := range []string{"no_such_tool", "issues.list", ""} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"state": "open"}})
		if err != nil {
			t.Fatalf("tool %q: %v", name, err)
		}
		if want := "refused: " + string(authz.CodePermissionMissing); !res.IsError || text(res) != want {
			t.Errorf("tool %q: %v %q, want %q", name, res.IsError, text(res), want)
		}
	}
	if got := denials() - before; got != 3 {
		t.Errorf("calls of unlisted tools left %d denials, want 3", got)
	}
	seen := tp.bytes()
	noLeak(t, "the broker's answers", seen)
	for _, protected := range []string{"api.example.com", r.Lease.ID, rigtest.Cred.Handle.String(), "lease_"} {
		if bytes.Contains(seen, []byte(protected)) {
			t.Errorf("the broker showed sandbox code %q", protected)
		}
	}
	for _, ev := range r.Evidence.Events() {
		if ev.Request != rigtest.Member() {
			t.Errorf("event %s carries %+v, want the channel's context", ev.Kind, ev.Request)
		}
	}
	evs, _ := json.Marshal(r.Evidence.Events())
	noLeak(t, "events", evs)
}

// TestBrokerRefusesUnregisteredDescriptor: a profile tool advertising a
// remote URL is refused unless a registration fixes exactly that; default
// deny holds whatever the descriptor says.
func TestBrokerRefusesUnregisteredDescriptor(t *testing.T) {
	r := rigtest.New(t)
	for name, pt := range map[string]gateway.ProfileTool{
		"remote MCP tool":                   {Capability: "remote.search", Tool: "search", Operation: "POST", Resource: "https://mcp.remote.example/search"},
		"registered capability, remote URL": {Capability: "issues.list", Tool: "list_issues", Operation: "GET", Resource: "https://mcp.remote.example/issues"},
		"registered capability, other tool": {Capability: "issues.list", Tool: "search", Operation: "GET", Resource: r.Base + "/v1/repos/acme/app/issues"},
		"registered capability, other op":   {Capability: "issues.list", Tool: "list_issues", Operation: "POST", Resource: r.Base + "/v1/repos/acme/app/issues"},
	} {
		r.Tools = []gateway.ProfileTool{pt}
		_, err := broker.New(r.Channel(rigtest.Member()))
		if !errors.Is(err, broker.CodeDescriptorUnregistered) {
			t.Errorf("%s: New = %v, want %s", name, err, broker.CodeDescriptorUnregistered)
		}
	}
	r.Tools = []gateway.ProfileTool{{Capability: "issues.list", Tool: "list_issues", Operation: "GET", Resource: r.Base + "/v1/repos/acme/app/issues"}}
	if _, err := broker.New(r.Channel(rigtest.Member())); err != nil {
		t.Errorf("the registered descriptor: %v", err)
	}
}

// TestBrokerRefusesDuplicateToolName: two registrations whose tools share
// a name (two endpoints of one remote tool, say) cannot both be on one
// channel: tools/call would reach whichever was added last.
func TestBrokerRefusesDuplicateToolName(t *testing.T) {
	r := rigtest.NewRemote(t)
	r.Grant("remote.search")
	var tools []gateway.ProfileTool
	for _, pt := range r.Tools {
		if pt.Capability == "remote.search" || pt.Capability == "remote.outside" {
			tools = append(tools, pt)
		}
	}
	r.Tools = tools
	if _, err := broker.New(r.Channel(rigtest.Member())); !errors.Is(err, broker.CodeDescriptorDuplicated) {
		t.Fatalf("New with two tools named search: %v, want %s", err, broker.CodeDescriptorDuplicated)
	}
}

// TestBrokerForCapabilityFreeCode: a channel whose profile allows no tool
// serves an empty tools/list; every call is refused by the gateway as a
// tool the profile hides, before any provider contact. (A Runner gives
// capability-free code no broker at all; this is the floor if one is
// built anyway.)
func TestBrokerForCapabilityFreeCode(t *testing.T) {
	r := rigtest.New(t)
	r.Tools = nil
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := serve(t, b)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 0 {
		t.Fatalf("tools/list = %+v, %v", res, err)
	}
	call, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_issues"})
	if err != nil || !call.IsError || text(call) != "refused: "+string(authz.CodePermissionMissing) {
		t.Errorf("a call without tools = %+v, %v; want refused: %s", call, err, authz.CodePermissionMissing)
	}
	if r.Hits.Load() != 0 {
		t.Error("the provider was contacted")
	}
}
