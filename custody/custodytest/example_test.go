package custodytest_test

import (
	"fmt"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/custodytest"
)

// A Store implementation runs the conformance suite from its own tests:
//
//	func TestConformance(t *testing.T) {
//		custodytest.TestStore(t, func(t *testing.T) custody.Store { return newStore(t) })
//	}
func ExampleTestStore() {
	_ = func(t *testing.T) {
		custodytest.TestStore(t, func(t *testing.T) custody.Store { return custody.NewMemoryStore() })
	}
}

func ExampleFindLeaks() {
	canary := []byte("ghp_CANARY_0123")
	fmt.Println(custodytest.FindLeaks(canary, []byte(`{"token":"[redacted]"}`)))
	fmt.Println(custodytest.FindLeaks(canary, []byte(fmt.Sprintf("dump: %x / %v", canary, canary))))
	// Output:
	// []
	// [decimal hex]
}

// CheckExposure over the whole module, as custody's exposure test runs it.
func ExampleCheckExposure() {
	_ = func(t *testing.T) {
		m, err := custodytest.LoadModule(".")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range custodytest.CheckExposure(m.Packages, custodytest.ExposureRules{Boundary: []string{m.Path + "/custody"}}) {
			t.Error(v)
		}
	}
}

// A durable Store also runs the sequence with reopen points:
//
//	func TestConformanceReopen(t *testing.T) {
//		custodytest.TestStoreReopen(t, func(t *testing.T) custodytest.Storage[*testing.T] {
//			path := filepath.Join(t.TempDir(), "custody.db")
//			return custodytest.Storage[*testing.T]{
//				Open:  func(t *testing.T) custody.Store { return mustOpen(t, path) },
//				Close: func(_ *testing.T, s custody.Store) error { return s.(*Store).Close() },
//			}
//		})
//	}
func ExampleTestStoreReopen() {
	_ = func(t *testing.T) {
		m := custody.NewMemoryStore()
		custodytest.TestStoreReopen(t, func(t *testing.T) custodytest.Storage[*testing.T] {
			return custodytest.Storage[*testing.T]{
				Open:  func(*testing.T) custody.Store { return m },
				Close: func(*testing.T, custody.Store) error { return nil },
			}
		})
	}
}
