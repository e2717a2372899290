package checkfu_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

func validContext() checkfu.RequestContext {
	return checkfu.RequestContext{
		Actor: "user:alice", Role: "member", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
		Session: "sess-1", Request: "req-1", Run: "run-1", Release: "checkfu@v0.1.0",
	}
}

func TestRequestContextValidate(t *testing.T) {
	if err := validContext().Validate(); err != nil {
		t.Fatalf("valid context: %v", err)
	}
	optional := validContext()
	optional.Role, optional.Project, optional.Run = "", "", ""
	if err := optional.Validate(); err != nil {
		t.Fatalf("context without the optional fields: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*checkfu.RequestContext)
	}{
		{"zero", func(rc *checkfu.RequestContext) { *rc = checkfu.RequestContext{} }},
		{"no actor", func(rc *checkfu.RequestContext) { rc.Actor = "" }},
		{"no tenant", func(rc *checkfu.RequestContext) { rc.Tenant = "" }},
		{"no workspace", func(rc *checkfu.RequestContext) { rc.Workspace = "" }},
		{"no session", func(rc *checkfu.RequestContext) { rc.Session = "" }},
		{"no request", func(rc *checkfu.RequestContext) { rc.Request = "" }},
		{"no release", func(rc *checkfu.RequestContext) { rc.Release = "" }},
		{"space in actor", func(rc *checkfu.RequestContext) { rc.Actor = "alice smith" }},
		{"slash in project", func(rc *checkfu.RequestContext) { rc.Project = "a/b" }},
		{"newline in run", func(rc *checkfu.RequestContext) { rc.Run = "r\n1" }},
		{"non-ASCII role", func(rc *checkfu.RequestContext) { rc.Role = "admín" }},
		{"long tenant", func(rc *checkfu.RequestContext) { rc.Tenant = strings.Repeat("t", checkfu.MaxContextField+1) }},
	} {
		rc := validContext()
		tc.edit(&rc)
		err := rc.Validate()
		if !errors.Is(err, checkfu.CodeRequestContextInvalid) {
			t.Errorf("%s: Validate = %v, want %s", tc.name, err, checkfu.CodeRequestContextInvalid)
		}
		if err != nil && strings.Contains(err.Error(), "admín") {
			t.Errorf("%s: error quotes the value: %v", tc.name, err)
		}
	}
	at := validContext()
	at.Tenant = strings.Repeat("t", checkfu.MaxContextField)
	if err := at.Validate(); err != nil {
		t.Errorf("tenant of exactly MaxContextField bytes: %v", err)
	}
}

func TestRequestContextCarried(t *testing.T) {
	ctx := checkfu.WithRequestContext(context.Background(), validContext())
	got, ok := checkfu.RequestContextFrom(ctx)
	if !ok || got != validContext() {
		t.Fatalf("RequestContextFrom = %+v, %v", got, ok)
	}
	if _, ok := checkfu.RequestContextFrom(context.Background()); ok {
		t.Error("a bare context carries a request context")
	}
	if _, ok := checkfu.RequestContextFrom(checkfu.WithRequestContext(context.Background(), checkfu.RequestContext{Actor: "x"})); ok {
		t.Error("an invalid request context was attached")
	}
}

func ExampleRequestContext() {
	rc := checkfu.RequestContext{
		Actor: "user:alice", Tenant: "org-1", Workspace: "ws-1",
		Session: "sess-1", Request: "req-1", Release: "checkfu@v0.1.0",
	}
	ctx := checkfu.WithRequestContext(context.Background(), rc)
	got, ok := checkfu.RequestContextFrom(ctx)
	fmt.Println(got.Actor, ok)
	rc.Tenant = ""
	fmt.Println(rc.Validate())
	// Output:
	// user:alice true
	// refused: request_context_invalid: checkfu: request context has no tenant
}
