package authz_test

import (
	"context"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
)

// Permit is the pure decision over a list: the first assignment that
// grants, or one refusal that says nothing of what came closest. An
// expired assignment grants nothing.
func ExamplePermit() {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	assignments := []authz.PermissionAssignment{
		{ID: "a-1", Actor: "user:bob", Capability: "github.issues.create", Tenant: "org-1", Workspace: "ws-1", ExpiresAt: now.Add(-time.Minute)},
		{ID: "a-2", Role: "member", Capability: "github.issues.list", Tenant: "org-1", Workspace: "ws-1", ExpiresAt: now.Add(time.Hour)},
	}
	rc := checkfu.RequestContext{Actor: "user:bob", Role: "member", Tenant: "org-1", Workspace: "ws-1", Session: "s", Request: "r", Release: "app@1"}

	a, err := authz.Permit(assignments, rc, authz.PermissionTarget{Capability: "github.issues.list"}, now)
	fmt.Println(a.ID, err)
	_, err = authz.Permit(assignments, rc, authz.PermissionTarget{Capability: "github.issues.create"}, now)
	fmt.Println(err)
	// Output:
	// a-2 <nil>
	// refused: permission_missing: authz: no permission assignment allows this call
}

// The gateway channel a call came through rides in the Go context of
// the plane's hops; an empty id is not attached.
func ExampleWithChannel() {
	ctx := authz.WithChannel(context.Background(), "ch-1")
	fmt.Printf("%q\n", authz.ChannelFrom(ctx))
	fmt.Printf("%q\n", authz.ChannelFrom(authz.WithChannel(context.Background(), "")))
	// Output:
	// "ch-1"
	// ""
}
