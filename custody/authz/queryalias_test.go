package authz_test

import (
	"encoding/json"
	"testing"

	"github.com/checkfu/checkfu/custody/authz"
)

// TestResolveRefusesQueryAliases checks that a bodiless call's argument
// whose name a common query parser (PHP, Rack, qs) reads as another name
// is refused when that other name is sent too or declared by the
// schema, and that names the schema declares, or that alias nothing in
// play, pass. The same arguments in a body pass: nothing folds them.
func TestResolveRefusesQueryAliases(t *testing.T) {
	schema := `{"type":"object","properties":{` +
		`"state":{"enum":["open","closed"]},"a_b":{"type":"string"},` +
		`"filter":{"type":"string"},"ids[]":{"type":"string"}}}`
	refused := []string{
		`{"state":"open","state[]":"all"}`,
		`{"state[]":"all"}`,
		`{"state[0]":"all"}`,
		`{"state[x][y]":"all"}`,
		`{"filter[status]":"x"}`,
		`{"state.x":"all"}`,
		`{"a.b":"x"}`,
		`{"a b":"x"}`,
		`{"a[b":"x"}`,
		`{" state":"all"}`,
		`{"x":"1","x[]":"2"}`,
		`{"x":"1","x.y":"2"}`,
		`{"x_y":"1","x.y":"2"}`,
		`{"x[":"1","x":"2"}`,      // Rack reads an unclosed bracket's base
		`{"x.y":"1","x.y[]":"2"}`, // Rack keeps the dot PHP would mangle
	}
	passed := []string{
		`{"state":"open"}`,
		`{"ids[]":"1"}`,
		`{"ids[]":"1","state":"closed"}`,
		`{"expand[]":"x"}`,
		`{"meta[key]":"v","meta[other]":"w"}`,
		`{"a.b.c":"x"}`,
	}
	for _, op := range []string{"GET", "POST"} {
		reg := govRegistration()
		reg.Operation, reg.Tool.InputSchema = op, json.RawMessage(schema)
		r, err := authz.NewRegistry(reg)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range refused {
			c := govCall()
			c.Operation, c.Arguments = op, json.RawMessage(args)
			_, err := r.Resolve(c, govCred)
			if op == "GET" {
				wantCode(t, err, authz.CodeArgumentsInvalid)
			} else if err != nil {
				t.Errorf("POST %s: %v; a body's names are not folded", args, err)
			}
		}
		for _, args := range passed {
			c := govCall()
			c.Operation, c.Arguments = op, json.RawMessage(args)
			if _, err := r.Resolve(c, govCred); err != nil {
				t.Errorf("%s %s: %v", op, args, err)
			}
		}
	}
}

// TestResolveRefusesBodyMethodOverride: a body-bearing call whose body has
// a top-level _method member (any case) is refused arguments_invalid
// before anything is sent, even when the schema declares it; the member
// nested deeper, or in a bodiless call (where egress refuses the query
// parameter), is not this check's.
func TestResolveRefusesBodyMethodOverride(t *testing.T) {
	for _, schema := range []string{`{"type":"object"}`, `{"type":"object","properties":{"_method":{"type":"string"}}}`} {
		for _, op := range []string{"POST", "PUT", "PATCH"} {
			reg := govRegistration()
			reg.Operation, reg.Tool.InputSchema = op, json.RawMessage(schema)
			r, err := authz.NewRegistry(reg)
			if err != nil {
				t.Fatal(err)
			}
			for _, args := range []string{`{"_method":"DELETE"}`, `{"title":"x","_METHOD":"DELETE"}`, `{"_Method":"GET"}`} {
				c := govCall()
				c.Operation, c.Arguments = op, json.RawMessage(args)
				_, err := r.Resolve(c, govCred)
				wantCode(t, err, authz.CodeArgumentsInvalid)
			}
			for _, args := range []string{`{"title":"x"}`, `{"item":{"_method":"DELETE"}}`, `{"method":"DELETE"}`} {
				c := govCall()
				c.Operation, c.Arguments = op, json.RawMessage(args)
				if _, err := r.Resolve(c, govCred); err != nil {
					t.Errorf("%s %s with schema %s: %v", op, args, schema, err)
				}
			}
		}
	}
}
