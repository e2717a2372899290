package gateway_test

import (
	"context"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/gateway"
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
