package eventlogtest_test

import (
	"testing"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

// A store implementation runs the suite from its own test, with a way to
// open handles on one storage and to rewrite rows behind the Store API.
func ExampleTestStore() {
	testMyStore := func(t *testing.T) { // func TestMyStore(t *testing.T)
		eventlogtest.TestStore(t, func(t *testing.T) eventlogtest.Harness {
			m := eventlog.NewMemoryStore() // your store, on fresh storage
			return eventlogtest.Harness{
				Open: func(*testing.T) eventlog.Store { return m },
				Rewrite: func(t *testing.T, session string, edit func([]eventlog.Record) []eventlog.Record) {
					// Read the rows with your store's own tools, apply
					// edit, and write the result back in place.
				},
			}
		})
	}
	_ = testMyStore
}
