package authz

import (
	"slices"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
)

// A PermissionAssignment says who may do what, where and until when: an
// actor or a role (exactly one), granted one capability or one
// Connection (exactly one), in a scope of tenant, workspace and,
// optionally, project, until ExpiresAt.
//
// A Connection is named by its credential binding's text form
// (address.Binding.String); granting a Connection grants every capability
// registered against that credential.
//
// The scope is an upper bound: an assignment with an empty Project covers
// every project of its workspace, one with a Project covers that project
// only, and no assignment reaches another workspace or tenant.
type PermissionAssignment struct {
	ID         string
	Actor      string
	Role       string
	Capability string
	Connection string
	Tenant     string
	Workspace  string
	Project    string
	ExpiresAt  time.Time
}

// validate refuses an assignment that does not name exactly one subject,
// exactly one grant, a tenant, a workspace and an expiry.
func (a PermissionAssignment) validate() error {
	switch {
	case (a.Actor == "") == (a.Role == ""):
		return checkfu.Refuse(CodeAssignmentInvalid, "authz: a permission assignment names exactly one of an actor or a role")
	case (a.Capability == "") == (a.Connection == ""):
		return checkfu.Refuse(CodeAssignmentInvalid, "authz: a permission assignment grants exactly one of a capability or a connection")
	case a.Tenant == "" || a.Workspace == "":
		return checkfu.Refuse(CodeAssignmentInvalid, "authz: a permission assignment is scoped to a tenant and a workspace")
	case a.ExpiresAt.IsZero():
		return checkfu.Refuse(CodeAssignmentInvalid, "authz: a permission assignment needs an expiry")
	}
	return nil
}

// A PermissionTarget is what a call needs permission for: the registered
// capability it resolves to and the Connection (credential binding text)
// that capability uses.
type PermissionTarget struct {
	Capability string
	Connection string
}

// Grants reports whether a, on its own, permits rc to reach target at
// time now. It is pure. The zero PermissionAssignment grants nothing.
func (a PermissionAssignment) Grants(rc checkfu.RequestContext, target PermissionTarget, now time.Time) bool {
	if a.validate() != nil || !rc.Valid() || !now.Before(a.ExpiresAt) {
		return false
	}
	subject := a.Actor != "" && a.Actor == rc.Actor || a.Role != "" && a.Role == rc.Role
	grant := a.Capability != "" && a.Capability == target.Capability || a.Connection != "" && a.Connection == target.Connection
	scope := a.Tenant == rc.Tenant && a.Workspace == rc.Workspace && (a.Project == "" || a.Project == rc.Project)
	return subject && grant && scope
}

// Permit is the pure permission decision: it returns the first of
// assignments that grants rc the target at now, or a refusal with
// [CodePermissionMissing]. The refusal is the same whatever is missing:
// it does not say whether the capability, the Connection, its resource or
// its credential exists, nor which assignment came closest.
func Permit(assignments []PermissionAssignment, rc checkfu.RequestContext, target PermissionTarget, now time.Time) (PermissionAssignment, error) {
	for _, a := range assignments {
		if a.Grants(rc, target, now) {
			return a, nil
		}
	}
	return PermissionAssignment{}, errPermissionMissing
}

// errPermissionMissing is the one refusal a missing permission gets: it
// names nothing the caller asked for.
var errPermissionMissing = checkfu.Refuse(CodePermissionMissing, "authz: no permission assignment allows this call")

// Assignments is the plane's book of permission assignments. Assign adds
// one, Revoke removes it by id alone, and Permit decides against the
// assignments held at that instant, so a revocation denies the next call.
// It is safe for concurrent use. The zero Assignments holds nothing and
// permits nothing.
type Assignments struct {
	mu   sync.RWMutex
	held []PermissionAssignment // guarded by mu
}

// Assign validates a, gives it an id when it has none, and keeps it. An
// incomplete assignment, or one whose id is already held, is refused with
// [CodeAssignmentInvalid].
func (s *Assignments) Assign(a PermissionAssignment) (PermissionAssignment, error) {
	if err := a.validate(); err != nil {
		return PermissionAssignment{}, err
	}
	if a.ID == "" {
		id, err := newID("assignment_")
		if err != nil {
			return PermissionAssignment{}, err
		}
		a.ID = id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.held, func(h PermissionAssignment) bool { return h.ID == a.ID }) {
		return PermissionAssignment{}, checkfu.Refuse(CodeAssignmentInvalid, "authz: permission assignment %s is already held", checkfu.Quote(a.ID))
	}
	s.held = append(s.held, a)
	return a, nil
}

// Revoke removes the assignment with id. Revoking an id not held is not an
// error: the result, no such permission, is the same.
func (s *Assignments) Revoke(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = slices.DeleteFunc(s.held, func(h PermissionAssignment) bool { return h.ID == id })
}

// Permit decides with [Permit] over the assignments held now.
func (s *Assignments) Permit(rc checkfu.RequestContext, target PermissionTarget, now time.Time) (PermissionAssignment, error) {
	if s == nil {
		return PermissionAssignment{}, errPermissionMissing
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Permit(s.held, rc, target, now)
}
