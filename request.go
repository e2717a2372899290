package checkfu

import "context"

// A RequestContext is the validated identity and correlation of one
// request on the trusted path: who acts (Actor, and the Role the plane
// resolved for it), for which Tenant (an organization), in which
// Workspace and Project, in which Session, under which Request and Run
// correlation ids, and which Release of the software serves it.
//
// It is established once, at the entry, by the plane authenticating a
// server-owned token (see package gateway), and then travels unchanged on
// every hop: broker, gateway, lease, approval, edge and event log. Nothing
// a sandbox sends can set or widen it: the broker binds it to the channel
// the Runner opened, and every hop takes it from there or from the Go
// context ([WithRequestContext]), never from a tool call.
//
// Every field is an identifier: 1 to [MaxContextField] bytes of ASCII
// letters, digits and "._:@-". Actor, Tenant, Workspace, Session, Request
// and Release are required; Role, Project and Run may be empty (no role, a
// request outside any project, no run). The zero RequestContext is
// invalid, so a missing context fails closed.
type RequestContext struct {
	Actor     string
	Role      string
	Tenant    string
	Workspace string
	Project   string
	Session   string
	Request   string
	Run       string
	Release   string
}

// MaxContextField is the longest field of a RequestContext, in bytes.
const MaxContextField = 128

// Validate reports, as a refusal with [CodeRequestContextInvalid], why rc
// is not a complete, well-formed context, or nil. The message names the
// field, never its value.
func (rc RequestContext) Validate() error {
	for _, f := range []struct {
		name     string
		v        string
		required bool
	}{
		{"actor", rc.Actor, true},
		{"role", rc.Role, false},
		{"tenant", rc.Tenant, true},
		{"workspace", rc.Workspace, true},
		{"project", rc.Project, false},
		{"session", rc.Session, true},
		{"request", rc.Request, true},
		{"run", rc.Run, false},
		{"release", rc.Release, true},
	} {
		if f.v == "" {
			if f.required {
				return Refuse(CodeRequestContextInvalid, "checkfu: request context has no %s", f.name)
			}
			continue
		}
		if !contextField(f.v) {
			return Refuse(CodeRequestContextInvalid, "checkfu: request context %s is not 1 to %d of ASCII letters, digits and ._:@-", f.name, MaxContextField)
		}
	}
	return nil
}

// Valid reports whether rc passes [RequestContext.Validate].
func (rc RequestContext) Valid() bool { return rc.Validate() == nil }

func contextField(s string) bool {
	if s == "" || len(s) > MaxContextField {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '_', c == ':', c == '@', c == '-':
		default:
			return false
		}
	}
	return true
}

type requestContextKey struct{}

// WithRequestContext returns a copy of ctx carrying rc, for the hops of
// one call inside the trusted plane. Only plane code holds a Go context;
// sandbox code never does, so it can neither set nor replace this value.
// An invalid rc is not attached: [RequestContextFrom] then reports false.
func WithRequestContext(ctx context.Context, rc RequestContext) context.Context {
	if !rc.Valid() {
		return ctx
	}
	return context.WithValue(ctx, requestContextKey{}, rc)
}

// RequestContextFrom returns the request context ctx carries, and false
// when it carries none.
func RequestContextFrom(ctx context.Context) (RequestContext, bool) {
	rc, ok := ctx.Value(requestContextKey{}).(RequestContext)
	return rc, ok
}
