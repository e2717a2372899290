package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/custodytest"
)

// TestConformanceReopen closes the store and reopens the same file at
// points of a long sequence of operations.
func TestConformanceReopen(t *testing.T) {
	custodytest.TestStoreReopen(t, func(t *testing.T) custodytest.Storage[*testing.T] {
		path := filepath.Join(t.TempDir(), "custody.db")
		return custodytest.Storage[*testing.T]{
			Open: func(t *testing.T) custody.Store {
				s, err := Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			Close: func(_ *testing.T, s custody.Store) error { return s.(*Store).Close() },
		}
	})
}
