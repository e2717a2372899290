package custodytest_test

import (
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/custodytest"
)

func TestMemoryStore(t *testing.T) {
	custodytest.TestStore(t, func(t *testing.T) custody.Store { return custody.NewMemoryStore() })
}

func TestMemoryStoreReopen(t *testing.T) {
	m := custody.NewMemoryStore()
	custodytest.TestStoreReopen(t, func(t *testing.T) custodytest.Storage[*testing.T] {
		return custodytest.Storage[*testing.T]{
			Open:  func(*testing.T) custody.Store { return m },
			Close: func(*testing.T, custody.Store) error { return nil },
		}
	})
}
