package authz_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
)

var assignNow = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func assignContext() checkfu.RequestContext {
	return checkfu.RequestContext{
		Actor: "user:bob", Role: "member", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
		Session: "sess-1", Request: "req-1", Release: "checkfu@test",
	}
}

func bobReads() authz.PermissionAssignment {
	return authz.PermissionAssignment{
		ID: "as-1", Actor: "user:bob", Capability: "github.read",
		Tenant: "org-1", Workspace: "ws-1", Project: "proj-1", ExpiresAt: assignNow.Add(time.Hour),
	}
}

var readTarget = authz.PermissionTarget{Capability: "github.read", Connection: "ns/github/h1"}

// TestPermitAllowedAndDenied is the allowed and the denied request of each
// condition an assignment checks.
func TestPermitAllowedAndDenied(t *testing.T) {
	rc := assignContext()
	if _, err := authz.Permit([]authz.PermissionAssignment{bobReads()}, rc, readTarget, assignNow); err != nil {
		t.Fatalf("allowed request: %v", err)
	}
	byRole := bobReads()
	byRole.Actor, byRole.Role = "", "member"
	byConn := bobReads()
	byConn.Capability, byConn.Connection = "", "ns/github/h1"
	wide := bobReads()
	wide.Project = ""
	for name, a := range map[string]authz.PermissionAssignment{"role": byRole, "connection": byConn, "workspace-wide": wide} {
		if _, err := authz.Permit([]authz.PermissionAssignment{a}, rc, readTarget, assignNow); err != nil {
			t.Errorf("allowed by %s: %v", name, err)
		}
	}
	denied := map[string]func(*authz.PermissionAssignment, *checkfu.RequestContext, *authz.PermissionTarget){
		"other actor": func(a *authz.PermissionAssignment, rc *checkfu.RequestContext, _ *authz.PermissionTarget) {
			rc.Actor = "user:eve"
		},
		"other role": func(a *authz.PermissionAssignment, rc *checkfu.RequestContext, _ *authz.PermissionTarget) {
			*a = byRole
			rc.Role = "viewer"
		},
		"no role": func(a *authz.PermissionAssignment, rc *checkfu.RequestContext, _ *authz.PermissionTarget) {
			*a = byRole
			rc.Role = ""
		},
		"other capability": func(_ *authz.PermissionAssignment, _ *checkfu.RequestContext, tg *authz.PermissionTarget) {
			tg.Capability = "github.write"
		},
		"other connection": func(a *authz.PermissionAssignment, _ *checkfu.RequestContext, tg *authz.PermissionTarget) {
			*a = byConn
			tg.Connection = "ns/github/h2"
		},
		"other tenant": func(_ *authz.PermissionAssignment, rc *checkfu.RequestContext, _ *authz.PermissionTarget) {
			rc.Tenant = "org-2"
		},
		"other workspace": func(_ *authz.PermissionAssignment, rc *checkfu.RequestContext, _ *authz.PermissionTarget) {
			rc.Workspace = "ws-2"
		},
		"other project": func(_ *authz.PermissionAssignment, rc *checkfu.RequestContext, _ *authz.PermissionTarget) {
			rc.Project = "proj-2"
		},
		"no project": func(_ *authz.PermissionAssignment, rc *checkfu.RequestContext, _ *authz.PermissionTarget) {
			rc.Project = ""
		},
		"expired": func(a *authz.PermissionAssignment, _ *checkfu.RequestContext, _ *authz.PermissionTarget) {
			a.ExpiresAt = assignNow
		},
		"invalid context": func(_ *authz.PermissionAssignment, rc *checkfu.RequestContext, _ *authz.PermissionTarget) {
			rc.Request = ""
		},
		"zero assignment": func(a *authz.PermissionAssignment, _ *checkfu.RequestContext, _ *authz.PermissionTarget) {
			*a = authz.PermissionAssignment{}
		},
	}
	var msg string
	for name, edit := range denied {
		a, rc, tg := bobReads(), assignContext(), readTarget
		edit(&a, &rc, &tg)
		_, err := authz.Permit([]authz.PermissionAssignment{a}, rc, tg, assignNow)
		if !errors.Is(err, authz.CodePermissionMissing) {
			t.Errorf("%s: Permit = %v, want %s", name, err, authz.CodePermissionMissing)
			continue
		}
		if msg == "" {
			msg = err.Error()
		}
		if err.Error() != msg {
			t.Errorf("%s: refusal %q differs from %q: it tells denials apart", name, err, msg)
		}
		for _, leak := range []string{"github", "ns/", "h1", "h2", "proj", "ws-", "org-", "bob", "eve"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: refusal %q names %q", name, err, leak)
			}
		}
	}
}

func TestAssignmentsRevoke(t *testing.T) {
	var book authz.Assignments
	a, err := book.Assign(bobReads())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := book.Permit(assignContext(), readTarget, assignNow); err != nil {
		t.Fatalf("before revoke: %v", err)
	}
	book.Revoke(a.ID)
	if _, err := book.Permit(assignContext(), readTarget, assignNow); !errors.Is(err, authz.CodePermissionMissing) {
		t.Fatalf("after revoke: %v, want %s", err, authz.CodePermissionMissing)
	}
	book.Revoke(a.ID) // twice is fine
}

func TestAssignInvalid(t *testing.T) {
	var book authz.Assignments
	for name, edit := range map[string]func(*authz.PermissionAssignment){
		"actor and role":         func(a *authz.PermissionAssignment) { a.Role = "member" },
		"neither actor nor role": func(a *authz.PermissionAssignment) { a.Actor = "" },
		"capability and conn":    func(a *authz.PermissionAssignment) { a.Connection = "ns/github/h1" },
		"no capability, no conn": func(a *authz.PermissionAssignment) { a.Capability = "" },
		"no tenant":              func(a *authz.PermissionAssignment) { a.Tenant = "" },
		"no workspace":           func(a *authz.PermissionAssignment) { a.Workspace = "" },
		"no expiry":              func(a *authz.PermissionAssignment) { a.ExpiresAt = time.Time{} },
	} {
		a := bobReads()
		edit(&a)
		if _, err := book.Assign(a); !errors.Is(err, authz.CodeAssignmentInvalid) {
			t.Errorf("%s: Assign = %v, want %s", name, err, authz.CodeAssignmentInvalid)
		}
	}
	if _, err := book.Assign(bobReads()); err != nil {
		t.Fatal(err)
	}
	if _, err := book.Assign(bobReads()); !errors.Is(err, authz.CodeAssignmentInvalid) {
		t.Errorf("duplicate id: %v", err)
	}
	var nilBook *authz.Assignments
	if _, err := nilBook.Permit(assignContext(), readTarget, assignNow); !errors.Is(err, authz.CodePermissionMissing) {
		t.Errorf("nil book: %v", err)
	}
}

// drawAssignment draws an assignment over a small alphabet so that
// matches and near misses are both common.
func drawAssignment(t *rapid.T, label string) authz.PermissionAssignment {
	pick := func(name string, xs ...string) string { return rapid.SampledFrom(xs).Draw(t, label+"."+name) }
	a := authz.PermissionAssignment{
		ID:        rapid.StringMatching(`as-[0-9]{1,4}`).Draw(t, label+".id"),
		Tenant:    pick("tenant", "t1", "t2"),
		Workspace: pick("workspace", "w1", "w2"),
		Project:   pick("project", "", "p1", "p2"),
		ExpiresAt: assignNow.Add(time.Duration(rapid.IntRange(-2, 2).Draw(t, label+".exp")) * time.Minute),
	}
	if rapid.Bool().Draw(t, label+".byRole") {
		a.Role = pick("role", "r1", "r2")
	} else {
		a.Actor = pick("actor", "a1", "a2")
	}
	if rapid.Bool().Draw(t, label+".byConn") {
		a.Connection = pick("conn", "c1", "c2")
	} else {
		a.Capability = pick("cap", "k1", "k2")
	}
	return a
}

func drawRequest(t *rapid.T) (checkfu.RequestContext, authz.PermissionTarget) {
	pick := func(name string, xs ...string) string { return rapid.SampledFrom(xs).Draw(t, name) }
	rc := checkfu.RequestContext{
		Actor: pick("actor", "a1", "a2"), Role: pick("role", "", "r1", "r2"),
		Tenant: pick("tenant", "t1", "t2"), Workspace: pick("workspace", "w1", "w2"), Project: pick("project", "", "p1", "p2"),
		Session: "s", Request: "q", Release: "r",
	}
	return rc, authz.PermissionTarget{Capability: pick("cap", "k1", "k2"), Connection: pick("conn", "c1", "c2")}
}

// TestPermitProperties checks the three properties of the decision: no
// assignment, no call; revoking an assignment denies the next call unless
// another still grants it; and a permitted call is always inside the
// scope of the assignment that permitted it (a scope never widens).
func TestPermitProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rc, tg := drawRequest(t)
		if _, err := authz.Permit(nil, rc, tg, assignNow); !errors.Is(err, authz.CodePermissionMissing) {
			t.Fatalf("no assignments: %v", err)
		}
		var book authz.Assignments
		n := rapid.IntRange(0, 6).Draw(t, "n")
		for i := range n {
			a := drawAssignment(t, "a"+string(rune('0'+i)))
			_, _ = book.Assign(a) // a duplicate id is refused; that is fine
		}
		got, err := book.Permit(rc, tg, assignNow)
		if err != nil {
			if !errors.Is(err, authz.CodePermissionMissing) {
				t.Fatalf("Permit refused with %v", err)
			}
			return
		}
		// A scope never widens: the permitting assignment covers the
		// request exactly.
		switch {
		case got.Tenant != rc.Tenant, got.Workspace != rc.Workspace, got.Project != "" && got.Project != rc.Project:
			t.Fatalf("%+v permitted a request outside its scope %+v", got, rc)
		case got.Actor != "" && got.Actor != rc.Actor, got.Role != "" && got.Role != rc.Role:
			t.Fatalf("%+v permitted another subject %+v", got, rc)
		case got.Capability != "" && got.Capability != tg.Capability, got.Connection != "" && got.Connection != tg.Connection:
			t.Fatalf("%+v permitted another target %+v", got, tg)
		case !assignNow.Before(got.ExpiresAt):
			t.Fatalf("%+v permitted after its expiry", got)
		}
		// Narrowing the request's scope to another project, workspace or
		// tenant than the permitting one's never finds more permission
		// through that same assignment.
		other := rc
		other.Workspace += "x"
		if got.Grants(other, tg, assignNow) {
			t.Fatalf("%+v grants in another workspace", got)
		}
		// Revoking the permitting assignment: the next call is denied
		// unless another held assignment grants it on its own.
		book.Revoke(got.ID)
		again, err := book.Permit(rc, tg, assignNow)
		if err == nil && again.ID == got.ID {
			t.Fatalf("revoked %s still permits", got.ID)
		}
	})
}
