package eventlogtest_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
	"github.com/checkfu/checkfu/internal/suitetest"
)

// A storage is the shared backing of sliceStore handles: a small Store
// an integrator might write, with one of the bugs integrators write
// switched on by name ("" is correct).
type storage struct {
	bug      string
	mu       sync.Mutex
	sessions map[string][]eventlog.Record // guarded by mu
	changed  chan struct{}                // closed and replaced on every write; guarded by mu
}

func newStorage(bug string) *storage {
	return &storage{bug: bug, sessions: map[string][]eventlog.Record{}, changed: make(chan struct{})}
}

func clone(r eventlog.Record) eventlog.Record {
	r.Envelope, r.DataKey, r.Sealed = slices.Clone(r.Envelope), slices.Clone(r.DataKey), slices.Clone(r.Sealed)
	return r
}

func (st *storage) wrote() {
	close(st.changed)
	st.changed = make(chan struct{})
}

func (st *storage) last(session string) uint64 {
	recs := st.sessions[session]
	if len(recs) == 0 {
		return 0
	}
	return recs[len(recs)-1].Seq
}

// A sliceStore is one handle on a storage.
type sliceStore struct {
	st   *storage
	mu   sync.Mutex
	last struct { // the handle's last append; guarded by mu
		session string
		seqs    []uint64
	}
}

func (s *sliceStore) Append(ctx context.Context, session string, expected uint64, recs []eventlog.Record) error {
	if err := eventlog.CheckAppend(session, expected, recs); err != nil {
		return err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if last := s.st.last(session); last != expected {
		return eventlog.SeqConflict(session, expected, last)
	}
	var seqs []uint64
	for _, r := range recs {
		s.st.sessions[session] = append(s.st.sessions[session], clone(r))
		seqs = append(seqs, r.Seq)
	}
	s.mu.Lock()
	s.last.session, s.last.seqs = session, seqs
	s.mu.Unlock()
	s.st.wrote()
	return nil
}

func (s *sliceStore) Head(ctx context.Context, session string) (eventlog.Head, error) {
	if err := eventlog.CheckSession(session); err != nil {
		return eventlog.Head{}, err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	recs := s.st.sessions[session]
	if len(recs) == 0 {
		return eventlog.Head{}, nil
	}
	return eventlog.Head{Seq: recs[len(recs)-1].Seq, Hash: recs[len(recs)-1].Hash}, nil
}

// pageSize is the page of the "pages in key order" store.
const pageSize = 2

func (s *sliceStore) Read(ctx context.Context, session string, from uint64, limit int) ([]eventlog.Record, error) {
	if err := eventlog.CheckSession(session); err != nil {
		return nil, err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	var out []eventlog.Record
	for _, r := range s.st.sessions[session] {
		if r.Seq >= from {
			out = append(out, clone(r))
		}
	}
	if s.st.bug == "pages in key order" { // pages keyed by their decimal number, scanned as text: "10" < "2"
		slices.SortStableFunc(out, func(a, b eventlog.Record) int {
			pa, pb := strconv.FormatUint((a.Seq-1)/pageSize, 10), strconv.FormatUint((b.Seq-1)/pageSize, 10)
			switch {
			case pa < pb:
				return -1
			case pa > pb:
				return 1
			}
			return 0
		})
	}
	return out[:min(limit, len(out))], nil
}

func (s *sliceStore) Wait(ctx context.Context, session string, seq uint64) error {
	for {
		s.st.mu.Lock()
		if s.st.last(session) >= seq {
			s.st.mu.Unlock()
			return nil
		}
		changed := s.st.changed
		s.st.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *sliceStore) Shred(ctx context.Context, session string, seq, expected uint64, shred eventlog.Record) error {
	if err := eventlog.CheckShred(session, seq, expected, shred); err != nil {
		return err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if last := s.st.last(session); last != expected {
		return eventlog.SeqConflict(session, expected, last)
	}
	recs := s.st.sessions[session]
	i := slices.IndexFunc(recs, func(r eventlog.Record) bool { return r.Seq == seq })
	if i < 0 || recs[i].Sealed == nil || recs[i].ShreddedBy != 0 {
		return eventlog.NothingToShred(session, seq)
	}
	if s.st.bug != "shred keeps content" { // marks the record, forgets to delete its keys
		recs[i].DataKey, recs[i].Sealed = nil, nil
	}
	recs[i].ShreddedBy = shred.Seq
	s.st.sessions[session] = append(recs, clone(shred))
	s.st.wrote()
	return nil
}

// Close ends the handle. The "drops the last append on close" store
// commits lazily and forgets its last write when the handle closes.
func (s *sliceStore) Close() error {
	if s.st.bug != "drops the last append on close" {
		return nil
	}
	s.mu.Lock()
	session, seqs := s.last.session, s.last.seqs
	s.mu.Unlock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if recs := s.st.sessions[session]; len(seqs) > 0 && len(recs) >= len(seqs) && s.st.last(session) == seqs[len(seqs)-1] {
		s.st.sessions[session] = recs[:len(recs)-len(seqs)]
	}
	return nil
}

func (st *storage) harness() eventlogtest.HarnessOf[*suitetest.Recorder] {
	return eventlogtest.HarnessOf[*suitetest.Recorder]{
		Open: func(*suitetest.Recorder) eventlog.Store { return &sliceStore{st: st} },
		Rewrite: func(_ *suitetest.Recorder, session string, edit func([]eventlog.Record) []eventlog.Record) {
			st.mu.Lock()
			defer st.mu.Unlock()
			var recs []eventlog.Record
			for _, r := range st.sessions[session] {
				recs = append(recs, clone(r))
			}
			st.sessions[session] = edit(recs)
		},
	}
}

// brokenStores are the bugs TestStore is proved to catch.
var brokenStores = []string{
	"drops the last append on close",
	"pages in key order",
	"shred keeps content",
}

func TestStoreRejectsBrokenStores(t *testing.T) {
	suitetest.QuietRapid(t)
	suitetest.Accepts(t, "sliceStore", func(r *suitetest.Recorder) {
		eventlogtest.TestStore(r, func(*suitetest.Recorder) eventlogtest.HarnessOf[*suitetest.Recorder] { return newStorage("").harness() })
	})
	for _, bug := range brokenStores {
		suitetest.Rejects(t, bug, func(r *suitetest.Recorder) {
			eventlogtest.TestStore(r, func(*suitetest.Recorder) eventlogtest.HarnessOf[*suitetest.Recorder] {
				return newStorage(bug).harness()
			})
		})
	}
}
