package edge_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
)

// NewEdge needs a lease book and a custodian; the zero Edge refuses
// every call, and so does an Edge handed a call the pipeline did not
// authorize.
func ExampleNewEdge() {
	_, err := edge.NewEdge(edge.EdgeConfig{})
	fmt.Println(errors.Is(err, checkfu.CodeConfigInvalid))

	github3 := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: github3, Capabilities: []string{"issues.create"}})
	leases, _ := authz.NewLeases(authz.LeaseConfig{Catalog: catalog, Registry: exampleRegistry()})
	e, err := edge.NewEdge(edge.EdgeConfig{
		Leases:    leases,
		Custodian: custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore()),
	})
	if err != nil {
		panic(err)
	}
	defer e.CloseIdleConnections()

	_, err = e.Send(context.Background(), edge.Authorized{})
	fmt.Println(errors.Is(err, edge.CodeNotAuthorized))
	// Output:
	// true
	// true
}

func ExampleNewTokenRuntime() {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	rt, err := edge.NewTokenRuntime(edge.TokenRuntimeConfig{
		Keys:      custody.GenerateKeyset(),
		Store:     custody.NewMemoryStore(),
		Refresher: &countingRefresher{now: clock}, // edge.OAuthRefresher in production
		Now:       clock,
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, err = rt.Open(ctx, exampleCred)
	fmt.Println(errors.Is(err, custody.CodeRecordNotFound)) // not enrolled yet

	if err := rt.Enroll(ctx, exampleCred, custody.NewSecret([]byte("refresh-token"))); err != nil {
		panic(err)
	}
	s, err := rt.Open(ctx, exampleCred)
	fmt.Println(s, err)
	s.Destroy()
	// Output:
	// true
	// [redacted] <nil>
}

// Invalidate is what the edge calls when the provider answers 401: the
// next Open refreshes first, even though the token has not expired.
func ExampleTokenRuntime_Invalidate() {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	refresher := &countingRefresher{now: clock}
	rt, _ := edge.NewTokenRuntime(edge.TokenRuntimeConfig{
		Keys: custody.GenerateKeyset(), Store: custody.NewMemoryStore(), Refresher: refresher, Now: clock,
	})
	ctx := context.Background()
	_ = rt.Enroll(ctx, exampleCred, custody.NewSecret([]byte("refresh-token")))
	s, _ := rt.Open(ctx, exampleCred)
	s.Destroy()

	fmt.Println(rt.Invalidate(ctx, exampleCred))
	s, _ = rt.Open(ctx, exampleCred)
	s.Destroy()
	fmt.Println("refreshes:", refresher.n)

	_ = rt.Remove(ctx, exampleCred)
	fmt.Println(errors.Is(rt.Invalidate(ctx, exampleCred), custody.CodeRecordNotFound))
	// Output:
	// <nil>
	// refreshes: 2
	// true
}
