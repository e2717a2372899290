package authz_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody/authz"
)

// An agent controls tool arguments, and JSON numbers reach the schema
// validator, which turns them into big.Rat values. A number whose exponent
// big.Rat refuses (beyond 1e6) used to crash the trusted plane with a nil
// pointer panic inside the validator ("type": "integer", minimum, enum,
// uniqueItems ...), and one just under it cost a 10^999999 computation per
// number. Such arguments are refused, typed, before validation.
func TestResolveRefusesHugeNumbers(t *testing.T) {
	schemas := []string{
		`{"type":"object","properties":{"n":{"type":"integer"}}}`,
		`{"type":"object","properties":{"n":{"type":"number","minimum":0}}}`,
		`{"type":"object","properties":{"n":{"enum":[1,2]}}}`,
		`{"type":"object","properties":{"n":{"type":"array","uniqueItems":true}}}`,
	}
	huge := []string{
		`1e1000001`, `-1E+99999999999999999999`, `1e-1000001`, `0.1e1000001`,
		`1e999999`, `1e1001`, `-5E-9999`, `1` + strings.Repeat("0", 5000),
		`0.` + strings.Repeat("0", 5000) + `1`,
	}
	for _, s := range schemas {
		reg := govRegistration()
		reg.Tool.InputSchema = json.RawMessage(s)
		r, err := authz.NewRegistry(reg)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range huge {
			c := govCall()
			c.Arguments = json.RawMessage(`{"n":` + n + `}`)
			if strings.Contains(s, "array") {
				c.Arguments = json.RawMessage(`{"n":[` + n + `,` + n + `]}`)
			}
			_, err := r.Resolve(c, govCred)
			wantCode(t, err, authz.CodeArgumentsInvalid)
		}
		// Ordinary numbers, large integer ids included, still pass.
		for _, n := range []string{`0`, `7`, `12345678901234567890123`, `1.5e3`, `2E-3`, `1e308`, `1e-1000`, `1E+1000`, `1e0000000000001`} {
			c := govCall()
			c.Arguments = json.RawMessage(`{"n":` + n + `}`)
			if strings.Contains(s, "array") {
				c.Arguments = json.RawMessage(`{"n":[` + n + `]}`)
			}
			if strings.Contains(s, "integer") || strings.Contains(s, "enum") {
				continue // these schemas refuse some of the values on their merits
			}
			if _, err := r.Resolve(c, govCred); err != nil {
				t.Errorf("schema %s: argument %s refused: %v", s, n, err)
			}
		}
	}
}
