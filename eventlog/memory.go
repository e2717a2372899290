package eventlog

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
)

// A MemoryStore is a [Store] held in process memory, for tests and for
// embedding where the log need not outlive the process. It is durable only
// as far as the process lives: use it for mock evidence, never as the
// audit record of a real session.
type MemoryStore struct {
	mu        sync.Mutex
	sessions  map[string]*memSession  // guarded by mu
	witnessed map[string]WitnessState // guarded by mu
	closed    bool                    // guarded by mu
}

type memSession struct {
	recs    []Record      // in append order, seq 1, 2, ... unless rewritten
	changed chan struct{} // closed and replaced on every append
}

var (
	_ Store         = (*MemoryStore)(nil)
	_ WitnessStore  = (*MemoryStore)(nil)
	_ SessionLister = (*MemoryStore)(nil)
)

var errClosed = &StoreError{Op: "use", Err: errors.New("store is closed")}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{sessions: map[string]*memSession{}} }

// session returns the state of id, creating it. The caller holds mu.
func (m *MemoryStore) session(id string) *memSession {
	if m.sessions == nil {
		m.sessions = map[string]*memSession{}
	}
	s := m.sessions[id]
	if s == nil {
		s = &memSession{changed: make(chan struct{})}
		m.sessions[id] = s
	}
	return s
}

func cloneRecord(r Record) Record {
	r.Envelope = slices.Clone(r.Envelope)
	r.DataKey = slices.Clone(r.DataKey)
	r.Sealed = slices.Clone(r.Sealed)
	return r
}

// Append implements [Store.Append].
func (m *MemoryStore) Append(ctx context.Context, session string, expected uint64, recs []Record) error {
	if err := CheckAppend(session, expected, recs); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errClosed
	}
	s := m.session(session)
	if last := s.last(); last != expected {
		return SeqConflict(session, expected, last)
	}
	for _, r := range recs {
		s.recs = append(s.recs, cloneRecord(r))
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// Head implements [Store.Head].
func (m *MemoryStore) Head(ctx context.Context, session string) (Head, error) {
	if err := CheckSession(session); err != nil {
		return Head{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Head{}, errClosed
	}
	s := m.sessions[session]
	if s == nil || len(s.recs) == 0 {
		return Head{}, nil
	}
	last := s.recs[len(s.recs)-1]
	return Head{Seq: last.Seq, Hash: last.Hash}, nil
}

// Sessions implements [SessionLister.Sessions].
func (m *MemoryStore) Sessions(ctx context.Context, after string, limit int) ([]SessionHead, error) {
	limit = min(limit, MaxSessionsPage)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errClosed
	}
	var out []SessionHead
	for id, s := range m.sessions {
		if id > after && len(s.recs) > 0 {
			last := s.recs[len(s.recs)-1]
			out = append(out, SessionHead{Session: id, Head: Head{Seq: last.Seq, Hash: last.Hash}})
		}
	}
	slices.SortFunc(out, func(a, b SessionHead) int { return strings.Compare(a.Session, b.Session) })
	if limit <= 0 {
		return nil, nil
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Read implements [Store.Read].
func (m *MemoryStore) Read(ctx context.Context, session string, from uint64, limit int) ([]Record, error) {
	if err := CheckSession(session); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errClosed
	}
	s := m.sessions[session]
	if s == nil {
		return nil, nil
	}
	var out []Record
	for _, r := range s.recs {
		if len(out) >= limit {
			break
		}
		if r.Seq >= from {
			out = append(out, cloneRecord(r))
		}
	}
	return out, nil
}

// Wait implements [Store.Wait]; it wakes as soon as an append lands.
func (m *MemoryStore) Wait(ctx context.Context, session string, seq uint64) error {
	if err := CheckSession(session); err != nil {
		return err
	}
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return errClosed
		}
		s := m.session(session)
		n := len(s.recs)
		if n > 0 && s.recs[n-1].Seq >= seq {
			m.mu.Unlock()
			return nil
		}
		changed := s.changed
		m.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Shred implements [Store.Shred].
func (m *MemoryStore) Shred(ctx context.Context, session string, seq, expected uint64, shred Record) error {
	if err := CheckShred(session, seq, expected, shred); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errClosed
	}
	s := m.session(session)
	if last := s.last(); last != expected {
		return SeqConflict(session, expected, last)
	}
	i := slices.IndexFunc(s.recs, func(r Record) bool { return r.Seq == seq })
	if i < 0 || s.recs[i].Sealed == nil || s.recs[i].ShreddedBy != 0 {
		return NothingToShred(session, seq)
	}
	r := &s.recs[i]
	clear(r.DataKey)
	clear(r.Sealed)
	r.DataKey, r.Sealed, r.ShreddedBy = nil, nil, shred.Seq
	s.recs = append(s.recs, cloneRecord(shred))
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// last returns the seq of the last record, 0 when there is none.
func (s *memSession) last() uint64 {
	if len(s.recs) == 0 {
		return 0
	}
	return s.recs[len(s.recs)-1].Seq
}

// Close implements [Store.Close]. Every later call fails.
func (m *MemoryStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for _, s := range m.sessions {
		close(s.changed)
		s.changed = make(chan struct{})
	}
	return nil
}

// rewrite replaces the records of session with edit(records), bypassing
// every check: the tamper tests use it as an attacker with write access to
// the memory would.
func (m *MemoryStore) rewrite(session string, edit func([]Record) []Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.session(session)
	recs := make([]Record, len(s.recs))
	for i, r := range s.recs {
		recs[i] = cloneRecord(r)
	}
	s.recs = edit(recs)
}

// Witnessed implements [WitnessStore.Witnessed].
func (m *MemoryStore) Witnessed(ctx context.Context, origin string) (WitnessState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return WitnessState{}, errClosed
	}
	st := m.witnessed[origin]
	st.Checkpoint = slices.Clone(st.Checkpoint)
	return st, nil
}

// Witness implements [WitnessStore.Witness].
func (m *MemoryStore) Witness(ctx context.Context, origin string, prev, next WitnessState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errClosed
	}
	if cur := m.witnessed[origin]; cur.Size != prev.Size || cur.Hash != prev.Hash {
		return WitnessConflict(origin)
	}
	if m.witnessed == nil {
		m.witnessed = map[string]WitnessState{}
	}
	next.Checkpoint = slices.Clone(next.Checkpoint)
	m.witnessed[origin] = next
	return nil
}
