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

func TestZeroMemoryStore(t *testing.T) {
	var m eventlog.MemoryStore
	l, err := eventlog.New(&m, eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if seq, err := l.Append(t.Context(), "s", eventlog.Event{Kind: eventlog.KindSkip}); err != nil || seq != 1 {
		t.Fatalf("Append on a zero MemoryStore = %d, %v", seq, err)
	}
}

func TestMemoryWitnessStore(t *testing.T) {
	m := eventlog.NewMemoryStore()
	eventlogtest.TestWitnessStore(t, func(*testing.T) eventlog.WitnessStore { return m })
}

func TestMemorySessionLister(t *testing.T) {
	eventlogtest.TestSessionLister(t, func(*testing.T) eventlogtest.SessionListerStore { return eventlog.NewMemoryStore() })
}
