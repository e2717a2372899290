package custodytest_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/custodytest"
	"pgregory.net/rapid"
)

// The generators give only valid bindings, and native custody round-trips
// any secret at any of them while refusing it at any other.
func TestGeneratorsAndNativeRoundTrip(t *testing.T) {
	ctx := context.Background()
	keys := custody.GenerateKeyset()
	rapid.Check(t, func(t *rapid.T) {
		n := custody.NewNative(keys, custody.NewMemoryStore())
		b := custodytest.Bindings().Draw(t, "binding")
		if err := b.Validate(); err != nil {
			t.Fatalf("generated invalid binding %s: %v", b, err)
		}
		other := custodytest.Bindings().Filter(func(o custody.Binding) bool { return o != b }).Draw(t, "other")
		plain := rapid.SliceOfN(rapid.Byte(), 8, 64).Draw(t, "plain")
		if err := n.Put(ctx, b, custody.NewSecret(bytes.Clone(plain))); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Open(ctx, b); err != nil {
			t.Fatalf("Open(%s): %v", b, err)
		}
		if _, err := n.Open(ctx, other); err == nil {
			t.Fatalf("Open at %s succeeded for a record put at %s only", other, b)
		}
	})
}
