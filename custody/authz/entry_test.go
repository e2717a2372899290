package authz_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
)

// TestEntryResolveIsRegistryResolve: resolving a call against the entry
// Find returned gives what Registry.Resolve gives, refusal or action,
// for the call right and for each way of getting it wrong.
func TestEntryResolveIsRegistryResolve(t *testing.T) {
	r := govRegistry(t)
	other := address.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_baaaaaaaaaaaaaaaaaaaaaaaaa")}
	calls := map[string]func(*authz.ToolCall) (address.Binding, bool){
		"right":      func(*authz.ToolCall) (address.Binding, bool) { return govCred, true },
		"tool":       func(c *authz.ToolCall) (address.Binding, bool) { c.Tool = "create_pr"; return govCred, false },
		"operation":  func(c *authz.ToolCall) (address.Binding, bool) { c.Operation = "PUT"; return govCred, false },
		"resource":   func(c *authz.ToolCall) (address.Binding, bool) { c.Resource += "/1"; return govCred, false },
		"credential": func(*authz.ToolCall) (address.Binding, bool) { return other, false },
		"arguments": func(c *authz.ToolCall) (address.Binding, bool) {
			c.Arguments = json.RawMessage(`{"body":"x"}`)
			return govCred, false
		},
		"not json": func(c *authz.ToolCall) (address.Binding, bool) {
			c.Arguments = json.RawMessage(`{title}`)
			return govCred, false
		},
		"duplicate": func(c *authz.ToolCall) (address.Binding, bool) {
			c.Arguments = json.RawMessage(`{"title":"a","title":"b"}`)
			return govCred, false
		},
		"both wrong":  func(c *authz.ToolCall) (address.Binding, bool) { c.Tool, c.Arguments = "x", nil; return govCred, false },
		"no argument": func(c *authz.ToolCall) (address.Binding, bool) { c.Arguments = nil; return govCred, false },
	}
	e, ok := r.Find(govCall().Capability)
	if !ok {
		t.Fatal("Find: the registered capability is not found")
	}
	for name, edit := range calls {
		t.Run(name, func(t *testing.T) {
			c := govCall()
			cred, good := edit(&c)
			want, werr := r.Resolve(c, cred)
			got, gerr := e.Resolve(c, cred)
			if good != (werr == nil) {
				t.Fatalf("Registry.Resolve: %v; the case is wrong", werr)
			}
			wc, _ := checkfu.CodeOf(werr)
			gc, _ := checkfu.CodeOf(gerr)
			if wc != gc || (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("Entry.Resolve = %+v, %v; Registry.Resolve = %+v, %v", got, gerr, want, werr)
			}
		})
	}
}

// TestEntryRefuses: an entry resolves only a call of its own capability,
// and the zero Entry (no registration) resolves nothing.
func TestEntryRefuses(t *testing.T) {
	r := govRegistry(t)
	read, ok := r.Find(govReadRegistration().Capability)
	if !ok {
		t.Fatal("Find: the registered capability is not found")
	}
	// The call is right for github.issues.create in every field but the
	// capability's entry: it must not resolve against github.issues.list's.
	c := govCall()
	c.Tool, c.Operation, c.Arguments = "list_issues", "GET", json.RawMessage(`{}`)
	_, err := read.Resolve(c, govCred)
	wantCode(t, err, authz.CodeCapabilityMismatch)

	if _, ok := r.Find("github.issues.delete"); ok {
		t.Error("Find found a capability that is not registered")
	}
	var zero authz.Entry
	_, err = zero.Resolve(govCall(), govCred)
	wantCode(t, err, authz.CodeCapabilityUnknown)
	if zero.Credential() != (address.Binding{}) || zero.Registration().Capability != "" {
		t.Error("the zero Entry reports a registration")
	}
}

// TestEntryRegistrationIsACopy: what Entry.Registration returns is the
// caller's; changing it changes neither the registry nor the entry.
func TestEntryRegistrationIsACopy(t *testing.T) {
	r := govRegistry(t)
	e, _ := r.Find(govCall().Capability)
	reg := e.Registration()
	want := bytes.Clone(reg.Tool.InputSchema)
	reg.Tool.InputSchema[0] = 'X'
	if got := e.Registration().Tool.InputSchema; !bytes.Equal(got, want) {
		t.Errorf("the entry's schema changed with the copy: %s", got)
	}
	if got, _ := r.Lookup(govCall().Capability); !bytes.Equal(got.Tool.InputSchema, want) {
		t.Errorf("the registry's schema changed with the copy: %s", got.Tool.InputSchema)
	}
	if e.Credential() != govCred || e.Protocol() != authz.HTTPS {
		t.Errorf("Entry: credential %v, protocol %s; want the registration's", e.Credential(), e.Protocol())
	}
}

// TestEntryConnectionIsTheCredential: the Connection an entry names, made
// once when the registry was built, is its credential binding's text;
// the zero Entry names none.
func TestEntryConnectionIsTheCredential(t *testing.T) {
	e, ok := govRegistry(t).Find(govCall().Capability)
	if !ok {
		t.Fatal("Find: the registered capability is not found")
	}
	if got, want := e.Connection(), e.Credential().String(); got != want || got != govCred.String() {
		t.Errorf("Connection() = %q, want %q", got, want)
	}
	if got := (authz.Entry{}).Connection(); got != "" {
		t.Errorf("the zero Entry's Connection() = %q, want \"\"", got)
	}
}
