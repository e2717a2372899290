package authz_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody/authz"
)

// TestResolveRefusesCaseFoldedMembers: the schema checks a member by its
// exact name, so an object with a second member whose name differs only
// in case ("state" and "STATE") would reach a provider that reads names
// case-insensitively with a value the schema never checked. Such
// arguments are refused at any depth, for a body and for a query; the
// same name at different depths, or names that differ otherwise, pass.
func TestResolveRefusesCaseFoldedMembers(t *testing.T) {
	schema := `{"type":"object","properties":{"title":{"type":"string","maxLength":5}}}`
	refused := []string{
		`{"title":"ok","TITLE":"much too long"}`,
		`{"title":"ok","Title":"x"}`,
		`{"title":"ok","x":{"k":1,"K":2}}`,
		`{"title":"ok","x":[{"a":1},{"b":1,"B":2}]}`,
		`{"title":"ok","\u212a":1,"k":2}`,                // KELVIN SIGN folds to k
		`{"title":"ok","stra\u00dfe":1,"STRA\u1e9eE":2}`, // ß and ẞ fold together
	}
	passed := []string{
		`{"title":"ok"}`,
		`{"title":"ok","x":{"title":"ok"}}`,
		`{"title":"ok","titles":"x","tit1e":"y"}`,
	}
	for _, op := range []string{"POST", "GET"} {
		reg := govRegistration()
		reg.Operation, reg.Tool.InputSchema = op, json.RawMessage(schema)
		r, err := authz.NewRegistry(reg)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range refused {
			if op == "GET" && strings.ContainsAny(args[1:], "{[") {
				continue // a query's members are scalars: refused anyway
			}
			c := govCall()
			c.Operation, c.Arguments = op, json.RawMessage(args)
			_, err := r.Resolve(c, govCred)
			wantCode(t, err, authz.CodeArgumentsInvalid)
			if err != nil && !strings.Contains(err.Error(), "differ only in case") {
				t.Errorf("%s %s: %v, want the case-folded members named", op, args, err)
			}
		}
		for _, args := range passed {
			if op == "GET" && strings.Contains(args, `"x":{`) {
				continue
			}
			c := govCall()
			c.Operation, c.Arguments = op, json.RawMessage(args)
			if _, err := r.Resolve(c, govCred); err != nil {
				t.Errorf("%s %s: %v", op, args, err)
			}
		}
	}
}
