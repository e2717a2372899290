package custody_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
)

var govCred = custody.Binding{Namespace: "acme", Integration: "github", Handle: custody.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}

const govIssueSchema = `{
	"type": "object",
	"properties": {"title": {"type": "string", "maxLength": 64}, "body": {"type": "string"}},
	"required": ["title"],
	"additionalProperties": false
}`

func govRegistration() custody.Registration {
	return custody.Registration{
		Capability: "github.issues.create",
		Operation:  "POST",
		Resource:   "https://api.github.example/repos/acme/app/issues",
		Credential: govCred,
		Effect:     custody.ExternalEffect,
		Tool:       custody.ToolDescriptor{Name: "create_issue", InputSchema: json.RawMessage(govIssueSchema)},
	}
}

func govReadRegistration() custody.Registration {
	return custody.Registration{
		Capability: "github.issues.list",
		Operation:  "GET",
		Resource:   "https://api.github.example/repos/acme/app/issues",
		Credential: govCred,
		Effect:     custody.ReadOnly,
		Tool: custody.ToolDescriptor{Name: "list_issues", InputSchema: json.RawMessage(`{
			"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`)},
	}
}

// fataler is the part of testing.TB and *rapid.T the helpers need.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

func govRegistry(t fataler) *custody.Registry {
	t.Helper()
	r, err := custody.NewRegistry(govRegistration(), govReadRegistration())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func govCall() custody.ToolCall {
	return custody.ToolCall{
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

// Mutant: deleting any case of validateRegistration (operation, resource
// scheme/userinfo/query/path, credential, effect, tool name, schema) or the
// duplicate check, or the compiler's refusing LoadURL, makes
// TestNewRegistryRefuses fail.
func TestNewRegistryRefuses(t *testing.T) {
	mod := func(f func(*custody.Registration)) []custody.Registration {
		r := govRegistration()
		f(&r)
		return []custody.Registration{r}
	}
	tests := []struct {
		name string
		regs []custody.Registration
	}{
		{"empty id", mod(func(r *custody.Registration) { r.Capability = "" })},
		{"upper-case id", mod(func(r *custody.Registration) { r.Capability = "GitHub" })},
		{"operation", mod(func(r *custody.Registration) { r.Operation = "post" })},
		{"operation connect", mod(func(r *custody.Registration) { r.Operation = "CONNECT" })},
		{"http", mod(func(r *custody.Registration) { r.Resource = "http://api.github.example/x" })},
		{"no host", mod(func(r *custody.Registration) { r.Resource = "https:///x" })},
		{"userinfo", mod(func(r *custody.Registration) { r.Resource = "https://u:p@api.github.example/x" })},
		{"query", mod(func(r *custody.Registration) { r.Resource = "https://api.github.example/x?a=1" })},
		{"fragment", mod(func(r *custody.Registration) { r.Resource = "https://api.github.example/x#f" })},
		{"dotdot", mod(func(r *custody.Registration) { r.Resource = "https://api.github.example/a/../x" })},
		{"no path", mod(func(r *custody.Registration) { r.Resource = "https://api.github.example" })},
		{"upper host", mod(func(r *custody.Registration) { r.Resource = "https://API.github.example/x" })},
		{"credential", mod(func(r *custody.Registration) { r.Credential.Handle = custody.Handle{} })},
		{"effect", mod(func(r *custody.Registration) { r.Effect = 0 })},
		{"tool name", mod(func(r *custody.Registration) { r.Tool.Name = "" })},
		{"no schema", mod(func(r *custody.Registration) { r.Tool.InputSchema = nil })},
		{"bad schema", mod(func(r *custody.Registration) { r.Tool.InputSchema = json.RawMessage(`{"type": 7}`) })},
		{"remote ref", mod(func(r *custody.Registration) {
			r.Tool.InputSchema = json.RawMessage(`{"$ref": "https://schemas.example/x.json"}`)
		})},
		{"duplicate", []custody.Registration{govRegistration(), govRegistration()}},
		{"file ref", mod(func(r *custody.Registration) {
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
			r, err := custody.NewRegistry(tt.regs...)
			if r != nil {
				t.Fatalf("NewRegistry returned a registry")
			}
			wantCode(t, err, custody.CodeRegistrationInvalid)
		})
	}
}

// Mutant: deleting the capability lookup, the schema validation, the
// strict-JSON checks (UTF-8, duplicate keys, trailing data, depth), the bodiless-argument check or any of the four
// exact-match cases in Resolve makes TestResolveRefuses fail.
func TestResolveRefuses(t *testing.T) {
	r := govRegistry(t)
	tests := []struct {
		name string
		call func(*custody.ToolCall)
		cred custody.Binding
		code checkfu.Code
	}{
		{"unknown capability", func(c *custody.ToolCall) { c.Capability = "github.issues.delete" }, govCred, custody.CodeCapabilityUnknown},
		{"schema: missing title", func(c *custody.ToolCall) { c.Arguments = json.RawMessage(`{"body":"x"}`) }, govCred, custody.CodeArgumentsInvalid},
		{"schema: extra property", func(c *custody.ToolCall) { c.Arguments = json.RawMessage(`{"title":"x","labels":1}`) }, govCred, custody.CodeArgumentsInvalid},
		{"schema: too long", func(c *custody.ToolCall) {
			c.Arguments = json.RawMessage(`{"title":"` + strings.Repeat("a", 65) + `"}`)
		}, govCred, custody.CodeArgumentsInvalid},
		{"duplicate key", func(c *custody.ToolCall) { c.Arguments = json.RawMessage(`{"title":"a","title":"b"}`) }, govCred, custody.CodeArgumentsInvalid},
		{"trailing data", func(c *custody.ToolCall) { c.Arguments = json.RawMessage(`{"title":"a"} {}`) }, govCred, custody.CodeArgumentsInvalid},
		{"not json", func(c *custody.ToolCall) { c.Arguments = json.RawMessage(`{title}`) }, govCred, custody.CodeArgumentsInvalid},
		{"empty", func(c *custody.ToolCall) { c.Arguments = nil }, govCred, custody.CodeArgumentsInvalid},
		{"bad utf8", func(c *custody.ToolCall) { c.Arguments = json.RawMessage("{\"title\":\"\xff\"}") }, govCred, custody.CodeArgumentsInvalid},
		{"tool", func(c *custody.ToolCall) { c.Tool = "create_pr" }, govCred, custody.CodeCapabilityMismatch},
		{"operation", func(c *custody.ToolCall) { c.Operation = "PUT" }, govCred, custody.CodeCapabilityMismatch},
		{"resource", func(c *custody.ToolCall) { c.Resource += "/1" }, govCred, custody.CodeCapabilityMismatch},
		{"credential", func(*custody.ToolCall) {}, custody.Binding{Namespace: "acme", Integration: "github", Handle: custody.MustParseHandle("ch_baaaaaaaaaaaaaaaaaaaaaaaaa")}, custody.CodeCapabilityMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := govCall()
			tt.call(&c)
			_, err := r.Resolve(c, tt.cred)
			wantCode(t, err, tt.code)
		})
	}
	t.Run("bodiless nested argument", func(t *testing.T) {
		reg := govReadRegistration()
		reg.Tool.InputSchema = json.RawMessage(`{"type":"object"}`)
		r, err := custody.NewRegistry(reg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Resolve(custody.ToolCall{Capability: reg.Capability, Tool: reg.Tool.Name, Operation: "GET", Resource: reg.Resource, Arguments: json.RawMessage(`{"a":{"b":1}}`)}, govCred)
		wantCode(t, err, custody.CodeArgumentsInvalid)
	})
	t.Run("too deep for a permissive schema", func(t *testing.T) {
		reg := govRegistration()
		reg.Tool.InputSchema = json.RawMessage(`{}`)
		r, err := custody.NewRegistry(reg)
		if err != nil {
			t.Fatal(err)
		}
		c := govCall()
		c.Arguments = json.RawMessage(strings.Repeat("[", custody.MaxArgumentDepth+1) + strings.Repeat("]", custody.MaxArgumentDepth+1))
		_, err = r.Resolve(c, govCred)
		wantCode(t, err, custody.CodeArgumentsInvalid)
		c.Arguments = json.RawMessage(strings.Repeat("[", custody.MaxArgumentDepth) + strings.Repeat("]", custody.MaxArgumentDepth))
		if _, err := r.Resolve(c, govCred); err != nil {
			t.Fatalf("nesting of exactly MaxArgumentDepth refused: %v", err)
		}
	})
	t.Run("zero registry", func(t *testing.T) {
		var zero custody.Registry
		_, err := zero.Resolve(govCall(), govCred)
		wantCode(t, err, custody.CodeCapabilityUnknown)
	})
}

// The argument order is fixed: arguments are validated before the exact
// match, so a call that is wrong on both counts reports the arguments.
func TestResolveValidatesArgumentsFirst(t *testing.T) {
	c := govCall()
	c.Operation = "PUT"
	c.Arguments = json.RawMessage(`{}`)
	_, err := govRegistry(t).Resolve(c, govCred)
	wantCode(t, err, custody.CodeArgumentsInvalid)
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
	if a.Digest() != b.Digest() || a.Effect != custody.ExternalEffect {
		t.Fatalf("digest or effect differ: %+v %+v", a, b)
	}
	// Any field change changes the digest.
	for _, m := range []func(*custody.Action){
		func(x *custody.Action) { x.Capability += "x" },
		func(x *custody.Action) { x.Operation = "PUT" },
		func(x *custody.Action) { x.Resource += "x" },
		func(x *custody.Action) { x.Effect = custody.ReadOnly },
		func(x *custody.Action) { x.Body = append([]byte(nil), `{"title":"x"}`...) },
	} {
		x := a
		m(&x)
		if x.Digest() == a.Digest() {
			t.Errorf("digest unchanged after modifying %+v", x)
		}
	}
}

func TestEffectText(t *testing.T) {
	for _, e := range []custody.Effect{custody.ReadOnly, custody.ExternalEffect} {
		b, err := e.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got custody.Effect
		if err := got.UnmarshalText(b); err != nil || got != e {
			t.Fatalf("round trip %v = %v, %v", e, got, err)
		}
	}
	var e custody.Effect
	if b, err := e.MarshalText(); err != nil || len(b) != 0 {
		t.Fatalf("zero effect marshalled to %q, %v; want empty", b, err)
	}
	if _, err := custody.Effect(9).MarshalText(); err == nil {
		t.Fatal("effect(9) marshalled")
	}
	wantCode(t, e.UnmarshalText(nil), custody.CodeRegistrationInvalid)
	wantCode(t, e.UnmarshalText([]byte("Read_Only")), custody.CodeRegistrationInvalid)
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
//
// Mutant: deleting any one exact-match case in Resolve makes this
// property fail.
func TestResolveExactMatchProperty(t *testing.T) {
	r := govRegistry(t)
	other := custody.Binding{Namespace: "acme", Integration: "github", Handle: custody.MustParseHandle("ch_baaaaaaaaaaaaaaaaaaaaaaaaa")}
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
			cred = rapid.SampledFrom([]custody.Binding{other, {Namespace: "acme2", Integration: "github", Handle: govCred.Handle}, {Namespace: "acme", Integration: "gitlab", Handle: govCred.Handle}}).Draw(t, "cred")
		}
		_, err := r.Resolve(c, cred)
		g := govCall()
		if c.Tool == g.Tool && c.Operation == g.Operation && c.Resource == g.Resource && cred == govCred {
			if err != nil {
				t.Fatalf("unchanged call refused: %v", err)
			}
			return
		}
		if !errors.Is(err, custody.CodeCapabilityMismatch) {
			t.Fatalf("Resolve(%+v, %v) = %v, want capability_mismatch", c, cred, err)
		}
	})
}
