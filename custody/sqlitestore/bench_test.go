package sqlitestore

import (
	"context"
	"testing"

	"github.com/checkfu/checkfu/custody/internal/sqlrecordstest"
)

// BenchmarkStore measures Get, Put, CompareAndSwap and List on a SQLite
// file (WAL, synchronous=FULL: every write is synced).
func BenchmarkStore(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir()+"/custody.db")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sqlrecordstest.BenchStore(b, s)
}
