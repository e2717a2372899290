package custody_test

import (
	"context"
	"errors"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
)

// CheckNamespace reports a record no key of the keyset opens: one sealed
// under another root key with the same version, or under a version the
// keyset does not hold.
func TestCheckNamespaceFindsForeignRecords(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		reader func(writer *custody.Keyset) *custody.Keyset
		want   checkfu.Code
	}{
		{"another root key", func(*custody.Keyset) *custody.Keyset { return custody.GenerateKeyset() }, custody.CodeAddressMismatch},
		{"version retired", func(w *custody.Keyset) *custody.Keyset {
			v2, _ := w.Rotate()
			v2only, _ := v2.Without(1)
			return v2only
		}, custody.CodeKeyVersionUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writer := custody.GenerateKeyset()
			store := custody.NewMemoryStore()
			w := custody.NewNative(writer, store)
			for range 3 {
				b := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()}
				if err := w.Put(ctx, b, custody.NewSecret([]byte("token"))); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := w.CheckNamespace(ctx, "acme"); n != 3 || err != nil {
				t.Fatalf("CheckNamespace with the writer's keys = %d, %v; want 3, nil", n, err)
			}
			if n, err := w.CheckNamespace(ctx, "other"); n != 0 || err != nil {
				t.Fatalf("CheckNamespace of an empty namespace = %d, %v; want 0, nil", n, err)
			}
			n, err := custody.NewNative(tc.reader(writer), store).CheckNamespace(ctx, "acme")
			if n != 0 || !errors.Is(err, tc.want) {
				t.Fatalf("CheckNamespace with other keys = %d, %v; want 0, %s", n, err, tc.want)
			}
		})
	}
}
