package pgstore_test

import (
	"context"
	"os"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/pgstore"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A multi-host deployment keeps sealed records in PostgreSQL; every host
// opens them with the same keyset.
func ExampleOpen() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	keys := custody.GenerateKeyset() // in production: custody.NewKeyset with keys from a KMS
	_ = custody.NewNative(keys, store)
}

// An embedder that already runs a pgx pool hands it to OpenPool, with the
// schema to keep the records in; the Store leaves the pool open.
func ExampleOpenPool() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	store, err := pgstore.OpenPool(ctx, pool, "checkfu_custody")
	if err != nil {
		panic(err)
	}
	keys := custody.GenerateKeyset()
	_ = custody.NewNative(keys, store)
}
