package sqlitestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/sqlitestore"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "custody-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "custody.db"))
	if err != nil {
		panic(err)
	}
	defer store.Close()

	ctx := context.Background()
	n := custody.NewNative(custody.GenerateKeyset(), store)
	b := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()}
	if err := n.Put(ctx, b, custody.NewSecret([]byte("ghp_example-token"))); err != nil {
		panic(err)
	}
	s, err := n.Open(ctx, b)
	fmt.Println(s, err)
	// Output: [redacted] <nil>
}
