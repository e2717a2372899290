package authz_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

var govCred = address.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}

const govIssueSchema = `{
	"type": "object",
	"properties": {"title": {"type": "string", "maxLength": 64}, "body": {"type": "string"}},
	"required": ["title"],
	"additionalProperties": false
}`

func govRegistration() authz.Registration {
	return authz.Registration{
		Capability: "github.issues.create",
		Operation:  "POST",
		Resource:   "https://api.github.example/repos/acme/app/issues",
		Credential: govCred,
		Effect:     authz.ExternalEffect,
		Tool:       authz.ToolDescriptor{Name: "create_issue", InputSchema: json.RawMessage(govIssueSchema)},
	}
}

func govReadRegistration() authz.Registration {
	return authz.Registration{
		Capability: "github.issues.list",
		Operation:  "GET",
		Resource:   "https://api.github.example/repos/acme/app/issues",
		Credential: govCred,
		Effect:     authz.ReadOnly,
		Tool: authz.ToolDescriptor{Name: "list_issues", InputSchema: json.RawMessage(`{
			"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`)},
	}
}

// fataler is the part of testing.TB and *rapid.T the helpers need.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

func govRegistry(t fataler) *authz.Registry {
	t.Helper()
	r, err := authz.NewRegistry(govRegistration(), govReadRegistration())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func govCall() authz.ToolCall {
	return authz.ToolCall{
		Capability: "github.issues.create",
		Tool:       "create_issue",
		Operation:  "POST",
		Resource:   "https://api.github.example/repos/acme/app/issues",
		Arguments:  json.RawMessage(`{"title": "hello", "body": "world"}`),
	}
}

func wantCode(t *testing.T, err error, code checkfu.Code) {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("err = %v, want code %s", err, code)
	}
}

func TestNewRegistryRemoteMCP(t *testing.T) {
	reg := govRegistration()
	reg.Protocol = authz.MCP
	r, err := authz.NewRegistry(reg)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Lookup(reg.Capability); got.Protocol != authz.MCP || got.Protocol.String() != "mcp" {
		t.Fatalf("Lookup: protocol %s, want mcp", got.Protocol)
	}
}

// modelRegistration is a valid model registration: Anthropic Messages,
// one model, a budget.
func modelRegistration() authz.Registration {
	return authz.Registration{
		Capability: "model.anthropic", Operation: "POST", Resource: "https://api.anthropic.example/v1/messages",
		Credential: govCred, Effect: authz.ReadOnly, Protocol: authz.ModelAPI,
		Tool:  authz.ToolDescriptor{Name: "model", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Model: authz.ModelRoute{Dialect: modelroute.AnthropicMessages, Models: []string{"claude-sonnet-4-5"}, Requests: 10, Tokens: 1000},
	}
}

// TestNewRegistryModel: a model registration is kept whole, its model
// list a copy; every incomplete one is refused.
func TestNewRegistryModel(t *testing.T) {
	reg := modelRegistration()
	r, err := authz.NewRegistry(reg)
	if err != nil {
		t.Fatal(err)
	}
	reg.Model.Models[0] = "changed"
	got, _ := r.Lookup(reg.Capability)
	if got.Protocol.String() != "model" || got.Model.Models[0] != "claude-sonnet-4-5" || got.Model.Requests != 10 {
		t.Fatalf("Lookup = %+v", got)
	}
	got.Model.Models[0] = "changed"
	if again, _ := r.Lookup(reg.Capability); again.Model.Models[0] != "claude-sonnet-4-5" {
		t.Fatalf("Lookup shares the model list")
	}
	for name, f := range map[string]func(*authz.Registration){
		"get":            func(r *authz.Registration) { r.Operation = "GET" },
		"effect":         func(r *authz.Registration) { r.Effect = authz.ExternalEffect },
		"no dialect":     func(r *authz.Registration) { r.Model.Dialect = "" },
		"other dialect":  func(r *authz.Registration) { r.Model.Dialect = modelroute.OpenAIResponses },
		"unknown":        func(r *authz.Registration) { r.Model.Dialect = "gemini" },
		"no models":      func(r *authz.Registration) { r.Model.Models = nil },
		"empty model":    func(r *authz.Registration) { r.Model.Models = []string{"claude", ""} },
		"spaced model":   func(r *authz.Registration) { r.Model.Models = []string{"claude sonnet"} },
		"no requests":    func(r *authz.Registration) { r.Model.Requests = 0 },
		"no tokens":      func(r *authz.Registration) { r.Model.Tokens = -1 },
		"route on https": func(r *authz.Registration) { r.Protocol = authz.HTTPS },
	} {
		reg := modelRegistration()
		f(&reg)
		if _, err := authz.NewRegistry(reg); !errors.Is(err, authz.CodeRegistrationInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNewRegistryRefuses(t *testing.T) {
	mod := func(f func(*authz.Registration)) []authz.Registration {
		r := govRegistration()
		f(&r)
		return []authz.Registration{r}
	}
	tests := []struct {
		name string
		regs []authz.Registration
	}{
		{"empty id", mod(func(r *authz.Registration) { r.Capability = "" })},
		{"upper-case id", mod(func(r *authz.Registration) { r.Capability = "GitHub" })},
		{"operation", mod(func(r *authz.Registration) { r.Operation = "post" })},
		{"operation connect", mod(func(r *authz.Registration) { r.Operation = "CONNECT" })},
		{"http", mod(func(r *authz.Registration) { r.Resource = "http://api.github.example/x" })},
		{"no host", mod(func(r *authz.Registration) { r.Resource = "https:///x" })},
		{"userinfo", mod(func(r *authz.Registration) { r.Resource = "https://u:p@api.github.example/x" })},
		{"query", mod(func(r *authz.Registration) { r.Resource = "https://api.github.example/x?a=1" })},
		{"fragment", mod(func(r *authz.Registration) { r.Resource = "https://api.github.example/x#f" })},
		{"dotdot", mod(func(r *authz.Registration) { r.Resource = "https://api.github.example/a/../x" })},
		{"no path", mod(func(r *authz.Registration) { r.Resource = "https://api.github.example" })},
		{"upper host", mod(func(r *authz.Registration) { r.Resource = "https://API.github.example/x" })},
		{"credential", mod(func(r *authz.Registration) { r.Credential.Handle = address.Handle{} })},
		{"effect", mod(func(r *authz.Registration) { r.Effect = 0 })},
		{"tool name", mod(func(r *authz.Registration) { r.Tool.Name = "" })},
		{"mcp not post", mod(func(r *authz.Registration) { r.Protocol, r.Operation = authz.MCP, "GET" })},
		{"protocol", mod(func(r *authz.Registration) { r.Protocol = 7 })},
		{"no schema", mod(func(r *authz.Registration) { r.Tool.InputSchema = nil })},
		{"bad schema", mod(func(r *authz.Registration) { r.Tool.InputSchema = json.RawMessage(`{"type": 7}`) })},
		{"remote ref", mod(func(r *authz.Registration) {
			r.Tool.InputSchema = json.RawMessage(`{"$ref": "https://schemas.example/x.json"}`)
		})},
		{"duplicate", []authz.Registration{govRegistration(), govRegistration()}},
		{"file ref", mod(func(r *authz.Registration) {
			// A schema the default loader could read: it must still not be loaded.
			p := filepath.Join(t.TempDir(), "s.json")
			if err := os.WriteFile(p, []byte(`{"type":"object"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			r.Tool.InputSchema = json.RawMessage(`{"$ref": "file://` + filepath.ToSlash(p) + `"}`)
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := authz.NewRegistry(tt.regs...)
			if r != nil {
				t.Fatalf("NewRegistry returned a registry")
			}
			wantCode(t, err, authz.CodeRegistrationInvalid)
		})
	}
}

func TestResolveRefuses(t *testing.T) {
	r := govRegistry(t)
	tests := []struct {
		name string
		call func(*authz.ToolCall)
		cred address.Binding
		code checkfu.Code
	}{
		{"unknown capability", func(c *authz.ToolCall) { c.Capability = "github.issues.delete" }, govCred, authz.CodeCapabilityUnknown},
		{"schema: missing title", func(c *authz.ToolCall) { c.Arguments = json.RawMessage(`{"body":"x"}`) }, govCred, authz.CodeArgumentsInvalid},
		{"schema: extra property", func(c *authz.ToolCall) { c.Arguments = json.RawMessage(`{"title":"x","labels":1}`) }, govCred, authz.CodeArgumentsInvalid},
		{"schema: too long", func(c *authz.ToolCall) {
			c.Arguments = json.RawMessage(`{"title":"` + strings.Repeat("a", 65) + `"}`)
		}, govCred, authz.CodeArgumentsInvalid},
		{"duplicate key", func(c *authz.ToolCall) { c.Arguments = json.RawMessage(`{"title":"a","title":"b"}`) }, govCred, authz.CodeArgumentsInvalid},
		{"trailing data", func(c *authz.ToolCall) { c.Arguments = json.RawMessage(`{"title":"a"} {}`) }, govCred, authz.CodeArgumentsInvalid},
		{"not json", func(c *authz.ToolCall) { c.Arguments = json.RawMessage(`{title}`) }, govCred, authz.CodeArgumentsInvalid},
		{"empty", func(c *authz.ToolCall) { c.Arguments = nil }, govCred, authz.CodeArgumentsInvalid},
		{"bad utf8", func(c *authz.ToolCall) { c.Arguments = json.RawMessage("{\"title\":\"\xff\"}") }, govCred, authz.CodeArgumentsInvalid},
		{"tool", func(c *authz.ToolCall) { c.Tool = "create_pr" }, govCred, authz.CodeCapabilityMismatch},
		{"operation", func(c *authz.ToolCall) { c.Operation = "PUT" }, govCred, authz.CodeCapabilityMismatch},
		{"resource", func(c *authz.ToolCall) { c.Resource += "/1" }, govCred, authz.CodeCapabilityMismatch},
		{"credential", func(*authz.ToolCall) {}, address.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_baaaaaaaaaaaaaaaaaaaaaaaaa")}, authz.CodeCapabilityMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := govCall()
			tt.call(&c)
			_, err := r.Resolve(c, tt.cred)
			wantCode(t, err, tt.code)
		})
	}
	// The list tool's schema is in the subset the quick check covers:
	// what it does not accept, the validator refuses.
	for _, args := range []string{`{"state":"OPEN"}`, `{"state":"open","labels":"x"}`, `{"state":1}`, `{"State":"open"}`, `[]`} {
		t.Run("quick-checked schema: "+args, func(t *testing.T) {
			reg := govReadRegistration()
			_, err := r.Resolve(authz.ToolCall{Capability: reg.Capability, Tool: reg.Tool.Name, Operation: reg.Operation, Resource: reg.Resource, Arguments: json.RawMessage(args)}, govCred)
			wantCode(t, err, authz.CodeArgumentsInvalid)
		})
	}
	// In a body, nothing but the schema refuses arguments that are not
	// an object: the quick check must see the type.
	for _, args := range []string{`[]`, `"open"`, `1`, `null`} {
		t.Run("quick-checked schema in a body: "+args, func(t *testing.T) {
			reg := govReadRegistration()
			reg.Operation = "POST"
			r, err := authz.NewRegistry(reg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Resolve(authz.ToolCall{Capability: reg.Capability, Tool: reg.Tool.Name, Operation: reg.Operation, Resource: reg.Resource, Arguments: json.RawMessage(args)}, govCred)
			wantCode(t, err, authz.CodeArgumentsInvalid)
		})
	}
	t.Run("bodiless nested argument", func(t *testing.T) {
		reg := govReadRegistration()
		reg.Tool.InputSchema = json.RawMessage(`{"type":"object"}`)
		r, err := authz.NewRegistry(reg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Resolve(authz.ToolCall{Capability: reg.Capability, Tool: reg.Tool.Name, Operation: "GET", Resource: reg.Resource, Arguments: json.RawMessage(`{"a":{"b":1}}`)}, govCred)
		wantCode(t, err, authz.CodeArgumentsInvalid)
	})
	t.Run("too deep for a permissive schema", func(t *testing.T) {
		reg := govRegistration()
		reg.Tool.InputSchema = json.RawMessage(`{}`)
		r, err := authz.NewRegistry(reg)
		if err != nil {
			t.Fatal(err)
		}
		c := govCall()
		c.Arguments = json.RawMessage(strings.Repeat("[", authz.MaxArgumentDepth+1) + strings.Repeat("]", authz.MaxArgumentDepth+1))
		_, err = r.Resolve(c, govCred)
		wantCode(t, err, authz.CodeArgumentsInvalid)
		c.Arguments = json.RawMessage(strings.Repeat("[", authz.MaxArgumentDepth) + strings.Repeat("]", authz.MaxArgumentDepth))
		if _, err := r.Resolve(c, govCred); err != nil {
			t.Fatalf("nesting of exactly MaxArgumentDepth refused: %v", err)
		}
	})
	t.Run("zero registry", func(t *testing.T) {
		var zero authz.Registry
		_, err := zero.Resolve(govCall(), govCred)
		wantCode(t, err, authz.CodeCapabilityUnknown)
	})
}

// The order is fixed, and the pipeline's: the exact match before the
// arguments, so a call that is wrong on both counts reports the match,
// and arguments are never parsed for a call that is not the registration.
func TestResolveMatchesFirst(t *testing.T) {
	c := govCall()
	c.Operation = "PUT"
	c.Arguments = json.RawMessage(`not even json`)
	_, err := govRegistry(t).Resolve(c, govCred)
	wantCode(t, err, authz.CodeCapabilityMismatch)
}

func TestResolveCanonical(t *testing.T) {
	r := govRegistry(t)
	a, err := r.Resolve(govCall(), govCred)
	if err != nil {
		t.Fatal(err)
	}
	c := govCall()
	c.Arguments = json.RawMessage("{\n\"body\":\"world\",   \"title\":\"hello\"}")
	b, err := r.Resolve(c, govCred)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Body) != `{"body":"world","title":"hello"}` || string(b.Body) != string(a.Body) {
		t.Fatalf("bodies %s and %s, want the same canonical form", a.Body, b.Body)
	}
	if a.Digest() != b.Digest() || a.Effect != authz.ExternalEffect {
		t.Fatalf("digest or effect differ: %+v %+v", a, b)
	}
	// Any field change changes the digest.
	for _, m := range []func(*authz.Action){
		func(x *authz.Action) { x.Capability += "x" },
		func(x *authz.Action) { x.Operation = "PUT" },
		func(x *authz.Action) { x.Resource += "x" },
		func(x *authz.Action) { x.Effect = authz.ReadOnly },
		func(x *authz.Action) { x.Body = append([]byte(nil), `{"title":"x"}`...) },
	} {
		x := a
		m(&x)
		if x.Digest() == a.Digest() {
			t.Errorf("digest unchanged after modifying %+v", x)
		}
	}
}

func TestEffectText(t *testing.T) {
	for _, e := range []authz.Effect{authz.ReadOnly, authz.ExternalEffect} {
		b, err := e.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got authz.Effect
		if err := got.UnmarshalText(b); err != nil || got != e {
			t.Fatalf("round trip %v = %v, %v", e, got, err)
		}
	}
	var e authz.Effect
	if b, err := e.MarshalText(); err != nil || len(b) != 0 {
		t.Fatalf("zero effect marshalled to %q, %v; want empty", b, err)
	}
	if _, err := authz.Effect(9).MarshalText(); err == nil {
		t.Fatal("effect(9) marshalled")
	}
	wantCode(t, e.UnmarshalText(nil), authz.CodeRegistrationInvalid)
	wantCode(t, e.UnmarshalText([]byte("Read_Only")), authz.CodeRegistrationInvalid)
}

func FuzzResolveArguments(f *testing.F) {
	r := govRegistry(f)
	for _, s := range []string{`{"title":"a"}`, `{"title":"a","body":"b"}`, `{"title":"a","title":"b"}`, `{"title":1e400}`, `[]`, `{"title":"\u00e9\ud800"}`, `{"title":"<&>"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		c := govCall()
		c.Arguments = args
		a, err := r.Resolve(c, govCred)
		if err != nil {
			if _, ok := checkfu.CodeOf(err); !ok {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if !json.Valid(a.Body) {
			t.Fatalf("canonical body %q is not JSON", a.Body)
		}
		// Canonical form is a fixed point.
		c.Arguments = a.Body
		b, err := r.Resolve(c, govCred)
		if err != nil || string(b.Body) != string(a.Body) {
			t.Fatalf("canonical %q re-resolved to %q, %v", a.Body, b.Body, err)
		}
	})
}

// Property: a call that differs from its registration in any one of tool,
// operation, resource or credential reference is refused with
// capability_mismatch; the unchanged call resolves.
func TestResolveExactMatchProperty(t *testing.T) {
	r := govRegistry(t)
	other := address.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_baaaaaaaaaaaaaaaaaaaaaaaaa")}
	rapid.Check(t, func(t *rapid.T) {
		c := govCall()
		cred := govCred
		suffix := rapid.StringMatching(`[A-Za-z0-9/._%-]{1,8}`).Draw(t, "suffix")
		switch rapid.IntRange(0, 5).Draw(t, "field") {
		case 0:
			c.Tool += suffix
		case 1:
			c.Operation = rapid.SampledFrom([]string{"GET", "PUT", "PATCH", "DELETE", "post", "POST "}).Draw(t, "op")
		case 2:
			c.Resource += suffix
		case 3:
			c.Resource = strings.Replace(c.Resource, "api.", rapid.SampledFrom([]string{"API.", "api2.", "api.."}).Draw(t, "host"), 1)
		case 4:
			cred = rapid.SampledFrom([]address.Binding{other, {Namespace: "acme2", Integration: "github", Handle: govCred.Handle}, {Namespace: "acme", Integration: "gitlab", Handle: govCred.Handle}}).Draw(t, "cred")
		}
		_, err := r.Resolve(c, cred)
		g := govCall()
		if c.Tool == g.Tool && c.Operation == g.Operation && c.Resource == g.Resource && cred == govCred {
			if err != nil {
				t.Fatalf("unchanged call refused: %v", err)
			}
			return
		}
		if !errors.Is(err, authz.CodeCapabilityMismatch) {
			t.Fatalf("Resolve(%+v, %v) = %v, want capability_mismatch", c, cred, err)
		}
	})
}

// exampleCred is the credential binding the examples use.
var exampleCred = govCred
