package authz_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
)

// TestMatchAndArguments checks the two halves the gateway calls in its own
// order: Match looks only at the registration fields, Arguments only at
// the arguments, and together they give what Resolve gives.
func TestMatchAndArguments(t *testing.T) {
	r := govRegistry(t)
	other := address.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_baaaaaaaaaaaaaaaaaaaaaaaaa")}
	for name, tc := range map[string]struct {
		edit func(*authz.ToolCall)
		cred address.Binding
	}{
		"unknown":    {func(c *authz.ToolCall) { c.Capability = "github.issues.delete" }, govCred},
		"tool":       {func(c *authz.ToolCall) { c.Tool = "create_pr" }, govCred},
		"operation":  {func(c *authz.ToolCall) { c.Operation = "PUT" }, govCred},
		"resource":   {func(c *authz.ToolCall) { c.Resource += "/1" }, govCred},
		"credential": {func(*authz.ToolCall) {}, other},
	} {
		c := govCall()
		tc.edit(&c)
		c.Arguments = json.RawMessage(`not even json`) // Match must not look
		_, err := r.Match(c, tc.cred)
		want := authz.CodeCapabilityMismatch
		if name == "unknown" {
			want = authz.CodeCapabilityUnknown
		}
		if err == nil {
			t.Errorf("%s: Match accepted a mismatched call", name)
			continue
		}
		wantCode(t, err, want)
	}
	c := govCall()
	c.Arguments = json.RawMessage(`not even json`)
	reg, err := r.Match(c, govCred)
	if err != nil || reg.Capability != c.Capability {
		t.Fatalf("Match of an exact call with bad arguments = %+v, %v", reg, err)
	}
	_, err = r.Arguments(c)
	wantCode(t, err, authz.CodeArgumentsInvalid)
	c.Arguments = json.RawMessage(`{"title":"x","labels":1}`)
	_, err = r.Arguments(c)
	wantCode(t, err, authz.CodeArgumentsInvalid)
	c = govCall()
	c.Capability = "nope"
	_, err = r.Arguments(c)
	wantCode(t, err, authz.CodeCapabilityUnknown)

	good := govCall()
	split, err := r.Arguments(good)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := r.Resolve(good, govCred)
	if err != nil {
		t.Fatal(err)
	}
	if split.Digest() != whole.Digest() || !bytes.Equal(split.Body, whole.Body) {
		t.Errorf("Arguments = %+v, Resolve = %+v", split, whole)
	}
}
