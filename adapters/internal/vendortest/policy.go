package vendortest

import (
	"testing"

	"github.com/checkfu/checkfu/egress"
)

// Compiled parses and compiles a network policy document; the test fails
// if it cannot.
func Compiled(t testing.TB, doc string) *egress.CompiledPolicy {
	t.Helper()
	p, err := egress.ParseNetworkPolicy([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
