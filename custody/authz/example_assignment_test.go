package authz_test

import (
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
)

// A member may list issues in one project; the same request in another
// project, or after the assignment is revoked, is refused the same way.
func ExampleAssignments() {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var book authz.Assignments
	a, _ := book.Assign(authz.PermissionAssignment{
		Role: "member", Capability: "github.issues.list",
		Tenant: "org-1", Workspace: "ws-1", Project: "proj-1", ExpiresAt: now.Add(time.Hour),
	})
	rc := checkfu.RequestContext{Actor: "user:bob", Role: "member", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1", Session: "s", Request: "r", Release: "app@1"}
	target := authz.PermissionTarget{Capability: "github.issues.list"}
	_, err := book.Permit(rc, target, now)
	fmt.Println(err)
	rc.Project = "proj-2"
	_, err = book.Permit(rc, target, now)
	fmt.Println(err)
	rc.Project = "proj-1"
	book.Revoke(a.ID)
	_, err = book.Permit(rc, target, now)
	fmt.Println(err)
	// Output:
	// <nil>
	// refused: permission_missing: authz: no permission assignment allows this call
	// refused: permission_missing: authz: no permission assignment allows this call
}
