package eventlog_test

import (
	"testing"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

func TestMemoryStore(t *testing.T) {
	eventlogtest.TestStore(t, func(t *testing.T) eventlogtest.Harness {
		m := eventlog.NewMemoryStore()
		return eventlogtest.Harness{
			Open: func(*testing.T) eventlog.Store { return m },
			Rewrite: func(_ *testing.T, session string, edit func([]eventlog.Record) []eventlog.Record) {
				eventlog.RewriteMemory(m, session, edit)
			},
		}
	})
}
