package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// The application server issues a token for the request context; the
// plane authenticates it.
func ExampleHMACTokens() {
	key := []byte("a key of at least thirty-two bytes!")
	tokens, err := gateway.NewHMACTokens(key, nil)
	if err != nil {
		panic(err)
	}
	rc := checkfu.RequestContext{Actor: "user:bob", Tenant: "org-1", Workspace: "ws-1", Session: "sess-1", Request: "req-1", Release: "app@1"}
	tok, err := tokens.Issue(rc, time.Minute)
	if err != nil {
		panic(err)
	}
	got, err := tokens.Authenticate(context.Background(), tok)
	fmt.Println(got.Actor, got.Tenant, err)
	_, err = tokens.Authenticate(context.Background(), tok+"x")
	fmt.Println(err)
	// Output:
	// user:bob org-1 <nil>
	// refused: token_invalid: gateway: the token is not one this plane issued
}

// The Runner opens a channel with the server-owned token; each call over
// it runs the gateway's checks in order. Without a permission assignment
// the call is refused and names nothing.
func ExampleGateway() {
	r := rigtest.New(exampleT{})
	tok, _ := r.Tokens.Issue(rigtest.Member(), time.Minute)
	ch, err := r.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: r.Lease.ID, Tools: r.Tools})
	if err != nil {
		panic(err)
	}
	_, err = ch.Call(context.Background(), "issues.list", json.RawMessage(`{"state":"open"}`))
	fmt.Println(errors.Is(err, authz.CodePermissionMissing), err)

	r.Grant("issues.list")
	resp, err := ch.Call(context.Background(), "issues.list", json.RawMessage(`{"state":"open"}`))
	fmt.Println(resp.Status, string(resp.Body), err)
	// Output:
	// true refused: permission_missing: authz: no permission assignment allows this call
	// 200 {"issues":[{"n":1}]} <nil>
}

// exampleT is a rigtest.TB for Examples: Fatal panics, and cleanups run
// when the process exits (never, for an Example; the loopback servers die
// with it).
type exampleT struct{}

func (exampleT) Helper()           {}
func (exampleT) Fatal(args ...any) { panic(fmt.Sprint(args...)) }
func (exampleT) Cleanup(func())    {}

// A registration of Protocol authz.MCP names a remote MCP server's tool:
// the gateway runs the same checks, then calls that one tool as the
// server's client, with the credential attached at custody's edge. The
// sandbox gets the tool's result, never the credential.
func ExampleGateway_remote() {
	r := rigtest.NewRemote(exampleT{})
	r.Grant("remote.search")
	tok, _ := r.Tokens.Issue(rigtest.Member(), time.Minute)
	ch, err := r.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: r.Lease.ID, Tools: r.Tools})
	if err != nil {
		panic(err)
	}
	resp, err := ch.Call(context.Background(), "remote.search", json.RawMessage(`{"query":"bugs"}`))
	fmt.Println(resp.Status, string(resp.Body), err)
	fmt.Println(r.Remote.Auth()[0] == "Bearer "+rigtest.Canary, r.Remote.OtherHits.Load())
	// Output:
	// 200 {"content":[{"type":"text","text":"found: bugs"}]} <nil>
	// true 0
}
