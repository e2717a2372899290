package pgstore

import (
	"context"
	"testing"

	"github.com/checkfu/checkfu/custody/internal/sqlrecordstest"
	"github.com/checkfu/checkfu/internal/pgtest"
)

// BenchmarkStore measures Get, Put, CompareAndSwap and List in a fresh
// schema of the test PostgreSQL.
func BenchmarkStore(b *testing.B) {
	pool := pgtest.Pool(b)
	schema := pgtest.SchemaName("custody_bench_")
	pgtest.DropSchema(b, pool.Config().ConnString(), schema)
	s, err := OpenPool(context.Background(), pool, schema)
	if err != nil {
		b.Fatal(err)
	}
	sqlrecordstest.BenchStore(b, s)
}
