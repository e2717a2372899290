package authz_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody/authz"
)

// The tool call comes from the agent, and Resolve's refusals end up in
// logs and events. A refusal quotes at most a bounded prefix of an agent
// string, however long the string: an agent cannot make one refusal carry
// megabytes into every log line that records it.
func TestResolveQuotesAgentStringsBounded(t *testing.T) {
	r := govRegistry(t)
	long := strings.Repeat("x", 1<<20)
	for name, mod := range map[string]func(*authz.ToolCall){
		"capability": func(c *authz.ToolCall) { c.Capability = long },
		"tool":       func(c *authz.ToolCall) { c.Tool = long },
		"operation":  func(c *authz.ToolCall) { c.Operation = long },
		"resource":   func(c *authz.ToolCall) { c.Resource += long },
	} {
		c := govCall()
		mod(&c)
		_, err := r.Resolve(c, govCred)
		if err == nil {
			t.Fatalf("%s: a call with a 1 MiB %s resolved", name, name)
		}
		if n := len(err.Error()); n > 1024 {
			t.Errorf("%s: the refusal is %d bytes long", name, n)
		}
	}
	// Argument keys are the agent's too: a duplicated one, one the
	// schema refuses, one a query cannot carry (under MaxArgumentBytes).
	long = long[:100_000]
	for name, args := range map[string]string{
		"duplicate key": `{"title":"a","` + long + `":1,"` + long + `":2}`,
		"schema":        `{"title":"a","` + long + `":1}`,
	} {
		c := govCall()
		c.Arguments = json.RawMessage(args)
		_, err := r.Resolve(c, govCred)
		if err == nil {
			t.Fatalf("%s: arguments resolved", name)
		}
		if n := len(err.Error()); n > 1024 {
			t.Errorf("%s: the refusal is %d bytes long", name, n)
		}
	}
	reg := govReadRegistration()
	reg.Tool.InputSchema = json.RawMessage(`{"type":"object"}`)
	rr, err := authz.NewRegistry(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rr.Resolve(authz.ToolCall{Capability: reg.Capability, Tool: reg.Tool.Name, Operation: "GET", Resource: reg.Resource, Arguments: json.RawMessage(`{"` + long + `":[1]}`)}, govCred)
	if err == nil || len(err.Error()) > 1024 {
		t.Errorf("query argument: refusal of %d bytes (%v)", len(fmtErr(err)), err == nil)
	}
	reg = govRegistration()
	reg.Tool.InputSchema = json.RawMessage(`{"type":"object","additionalProperties":{"type":"string"}}`)
	if rr, err = authz.NewRegistry(reg); err != nil {
		t.Fatal(err)
	}
	c0 := govCall()
	c0.Arguments = json.RawMessage(`{"` + long + `":1}`)
	_, err = rr.Resolve(c0, govCred)
	if err == nil || len(err.Error()) > 1024 {
		t.Errorf("schema location: refusal of %d bytes (%v)", len(fmtErr(err)), err == nil)
	}

	// A short value is still quoted whole, so the refusal says what was wrong.
	c := govCall()
	c.Tool = "create_pr"
	_, err = r.Resolve(c, govCred)
	if err == nil || !strings.Contains(err.Error(), `"create_pr"`) {
		t.Fatalf("refusal %v does not quote the short tool name", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
