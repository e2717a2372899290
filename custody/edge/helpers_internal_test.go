package edge

import (
	"bytes"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/internal/reveal"
)

var testHandle = address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")

func testBinding() custody.Binding {
	return custody.Binding{Namespace: "github", Integration: "deploy-token", Handle: testHandle}
}

// revealed returns a copy of s's bytes.
func revealed(t interface{ Fatalf(string, ...any) }, s *custody.Secret) []byte {
	var out []byte
	if err := reveal.With(s, func(b []byte) error { out = bytes.Clone(b); return nil }); err != nil {
		t.Fatalf("reveal: %v", err)
	}
	return out
}
