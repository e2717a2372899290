package edge_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
)

// NewEdge needs a lease book and a custodian; the zero Edge refuses
// every call, and so does an Edge handed a call the pipeline did not
// authorize.
func ExampleNewEdge() {
	_, err := edge.NewEdge(edge.EdgeConfig{})
	fmt.Println(errors.Is(err, checkfu.CodeConfigInvalid))

	catalog, _ := authz.NewCatalog()
	registry, _ := authz.NewRegistry()
	leases, _ := authz.NewLeases(authz.LeaseConfig{Catalog: catalog, Registry: registry})
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
	cred := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	rt, err := edge.NewTokenRuntime(edge.TokenRuntimeConfig{
		Keys:  custody.GenerateKeyset(),
		Store: custody.NewMemoryStore(),
		// A stand-in for the provider's token endpoint; in production,
		// an edge.OAuthRefresher over an egress client.
		Refresher: edge.RefresherFunc(func(context.Context, custody.Binding, *custody.Secret) (access, rotated *custody.Secret, expiresAt time.Time, err error) {
			return custody.NewSecret([]byte("access-token")), nil, clock().Add(time.Hour), nil
		}),
		Now: clock,
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, err = rt.Open(ctx, cred)
	fmt.Println(errors.Is(err, custody.CodeRecordNotFound)) // not enrolled yet

	if err := rt.Enroll(ctx, cred, custody.NewSecret([]byte("refresh-token"))); err != nil {
		panic(err)
	}
	s, err := rt.Open(ctx, cred)
	fmt.Println(s, err)
	s.Destroy()
	// Output:
	// true
	// [redacted] <nil>
}

// Invalidate is what the edge calls when the provider answers 401: the
// next Open refreshes first, even though the token has not expired.
func ExampleTokenRuntime_Invalidate() {
	cred := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	refreshes := 0 // a stand-in for the provider's token endpoint counts its exchanges
	refresher := edge.RefresherFunc(func(context.Context, custody.Binding, *custody.Secret) (access, rotated *custody.Secret, expiresAt time.Time, err error) {
		refreshes++
		return custody.NewSecret(fmt.Appendf(nil, "access-%d", refreshes)), nil, clock().Add(time.Hour), nil
	})
	rt, _ := edge.NewTokenRuntime(edge.TokenRuntimeConfig{
		Keys: custody.GenerateKeyset(), Store: custody.NewMemoryStore(), Refresher: refresher, Now: clock,
	})
	ctx := context.Background()
	_ = rt.Enroll(ctx, cred, custody.NewSecret([]byte("refresh-token")))
	s, _ := rt.Open(ctx, cred)
	s.Destroy()

	fmt.Println(rt.Invalidate(ctx, cred))
	s, _ = rt.Open(ctx, cred)
	s.Destroy()
	fmt.Println("refreshes:", refreshes)

	_ = rt.Remove(ctx, cred)
	fmt.Println(errors.Is(rt.Invalidate(ctx, cred), custody.CodeRecordNotFound))
	// Output:
	// <nil>
	// refreshes: 2
	// true
}
