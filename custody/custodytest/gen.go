package custodytest

import (
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"pgregory.net/rapid"
)

// Names generates valid namespace and integration names, biased towards
// short ones that differ only at their edges (so that boundary shifts
// between two names stay valid).
func Names() *rapid.Generator[string] {
	return rapid.StringMatching(`[A-Za-z0-9][A-Za-z0-9._-]{0,24}`)
}

// Handles generates valid handles, deterministically from rapid's source
// (address.NewHandle is random and would defeat shrinking).
func Handles() *rapid.Generator[custody.Handle] {
	return rapid.Custom(func(t *rapid.T) custody.Handle {
		// 25 free base32 characters, and a last one whose two low bits are
		// zero, so that the 26 characters decode canonically to 16 bytes.
		return address.MustParseHandle(rapid.StringMatching(`ch_[a-z2-7]{25}[aeimquy4]`).Draw(t, "handle"))
	})
}

// Bindings generates valid custody bindings.
func Bindings() *rapid.Generator[custody.Binding] {
	return rapid.Custom(func(t *rapid.T) custody.Binding {
		return custody.Binding{
			Namespace:   Names().Draw(t, "namespace"),
			Integration: Names().Draw(t, "integration"),
			Handle:      Handles().Draw(t, "handle"),
		}
	})
}
