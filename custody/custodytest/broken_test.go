package custodytest_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/internal/suitetest"
)

// A mapStore is a small Store an integrator might write, with one of the
// bugs integrators write switched on by name ("" is correct).
type mapStore struct {
	bug  string
	mu   sync.Mutex
	recs map[string]custody.Record // by key(binding); guarded by mu
}

func (s *mapStore) key(b custody.Binding) string {
	switch s.bug {
	case "case-folding keys": // a case-insensitive collation
		return strings.ToLower(b.Namespace + "\x00" + b.Integration + "\x00" + b.Handle.String())
	case "concatenated key": // namespace and integration glued without a separator
		return b.Namespace + b.Integration + "/" + b.Handle.String()
	}
	return b.Namespace + "\x00" + b.Integration + "\x00" + b.Handle.String()
}

func notFound(b custody.Binding) error {
	return checkfu.Refuse(custody.CodeRecordNotFound, "mapstore: no record at %s", b)
}

func (s *mapStore) Put(ctx context.Context, rec custody.Record) error {
	if err := rec.Binding.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recs == nil {
		s.recs = map[string]custody.Record{}
	}
	if s.bug != "aliasing Put" {
		rec.Sealed = bytes.Clone(rec.Sealed)
	}
	s.recs[s.key(rec.Binding)] = rec
	return nil
}

func (s *mapStore) Get(ctx context.Context, b custody.Binding) (custody.Record, error) {
	if err := b.Validate(); err != nil {
		return custody.Record{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bug == "namespace-blind Get" { // WHERE integration = ? AND handle = ?
		for _, rec := range s.recs {
			if rec.Binding.Integration == b.Integration && rec.Binding.Handle == b.Handle {
				return custody.Record{Binding: b, Sealed: bytes.Clone(rec.Sealed)}, nil
			}
		}
		return custody.Record{}, notFound(b)
	}
	rec, ok := s.recs[s.key(b)]
	if !ok {
		return custody.Record{}, notFound(b)
	}
	return custody.Record{Binding: b, Sealed: bytes.Clone(rec.Sealed)}, nil
}

func (s *mapStore) CompareAndSwap(ctx context.Context, b custody.Binding, old, sealed []byte) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if s.bug == "racy CompareAndSwap" { // read, compare, write: three round trips, no lock held
		rec, err := s.Get(ctx, b)
		if err != nil {
			return err
		}
		time.Sleep(200 * time.Microsecond) // the round trip to a remote store
		if !bytes.Equal(rec.Sealed, old) {
			return checkfu.Refuse(custody.CodeRecordConflict, "mapstore: conflict at %s", b)
		}
		return s.Put(ctx, custody.Record{Binding: b, Sealed: sealed})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.recs[s.key(b)]
	switch {
	case !ok && s.bug == "upserting CompareAndSwap": // INSERT ... ON CONFLICT
		if s.recs == nil {
			s.recs = map[string]custody.Record{}
		}
		s.recs[s.key(b)] = custody.Record{Binding: b, Sealed: bytes.Clone(sealed)}
		return nil
	case !ok:
		return notFound(b)
	case !bytes.Equal(rec.Sealed, old):
		return checkfu.Refuse(custody.CodeRecordConflict, "mapstore: conflict at %s", b)
	}
	rec.Sealed = bytes.Clone(sealed)
	s.recs[s.key(b)] = rec
	return nil
}

func (s *mapStore) Delete(ctx context.Context, b custody.Binding) error {
	if err := b.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.recs[s.key(b)]; !ok {
		return notFound(b)
	}
	if s.bug == "namespace-blind Delete" { // DELETE ... WHERE integration = ? AND handle = ?
		for k, rec := range s.recs {
			if rec.Binding.Integration == b.Integration && rec.Binding.Handle == b.Handle {
				delete(s.recs, k)
			}
		}
		return nil
	}
	delete(s.recs, s.key(b))
	return nil
}

func (s *mapStore) List(ctx context.Context, namespace string) ([]custody.Binding, error) {
	if err := address.CheckNamespace(namespace); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []custody.Binding
	for _, rec := range s.recs {
		if rec.Binding.Namespace == namespace {
			out = append(out, rec.Binding)
		}
	}
	slices.SortFunc(out, address.CompareBindings)
	return out, nil
}

// brokenStores are the bugs TestStore is proved to catch; the package
// doc of TestStore lists them.
var brokenStores = []string{
	"namespace-blind Get",
	"namespace-blind Delete",
	"racy CompareAndSwap",
	"case-folding keys",
	"concatenated key",
	"upserting CompareAndSwap",
	"aliasing Put",
}

func TestStoreRejectsBrokenStores(t *testing.T) {
	suitetest.QuietRapid(t)
	suitetest.Accepts(t, "mapStore", func(r *suitetest.Recorder) {
		custodytest.TestStore(r, func(*suitetest.Recorder) custody.Store { return &mapStore{} })
	})
	for _, bug := range brokenStores {
		suitetest.Rejects(t, bug, func(r *suitetest.Recorder) {
			custodytest.TestStore(r, func(*suitetest.Recorder) custody.Store { return &mapStore{bug: bug} })
		})
	}
}

// A fakeRuntime is a small IntegrationRuntime with a fake provider and
// clock, and one of the bugs integrators write switched on by name.
type fakeRuntime struct {
	bug      string
	enrolled custody.Binding
	life     time.Duration
	clock    *fakeClock
	issued   atomic.Int64 // refreshes the provider answered

	mu          sync.Mutex
	cred        []byte    // guarded by mu
	refreshedAt time.Time // guarded by mu
	invalid     bool      // guarded by mu
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// refresh is the provider exchange.
func (r *fakeRuntime) refresh(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fakeruntime: refresh: %w", err)
	}
	time.Sleep(time.Millisecond)
	return fmt.Appendf(nil, "access-CANARY-%06d", r.issued.Add(1)), nil
}

func (r *fakeRuntime) stale() bool {
	return r.cred == nil || r.invalid || r.bug == "no cache" || !r.clock.Now().Before(r.refreshedAt.Add(r.life))
}

func (r *fakeRuntime) Open(ctx context.Context, b custody.Binding) (*custody.Secret, error) {
	if b != r.enrolled {
		return nil, notFound(b)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stale() {
		return custody.NewSecret(bytes.Clone(r.cred)), nil
	}
	if r.bug == "no single flight" { // checks under the lock, refreshes outside it
		r.mu.Unlock()
		cred, err := r.refresh(ctx)
		r.mu.Lock()
		if err != nil {
			return nil, err
		}
		r.cred, r.refreshedAt, r.invalid = cred, r.clock.Now(), false
		return custody.NewSecret(bytes.Clone(cred)), nil
	}
	old := r.cred
	cred, err := r.refresh(ctx)
	if err != nil {
		return nil, err
	}
	if r.bug != "expiry from enrolment" || r.refreshedAt.IsZero() {
		r.refreshedAt = r.clock.Now()
	}
	r.cred, r.invalid = cred, false
	if r.bug == "stale while revalidate" && old != nil { // serves what it had while it refreshes
		return custody.NewSecret(bytes.Clone(old)), nil
	}
	return custody.NewSecret(bytes.Clone(cred)), nil
}

func (r *fakeRuntime) Invalidate(ctx context.Context, b custody.Binding) error {
	if b != r.enrolled {
		return notFound(b)
	}
	if r.bug == "Invalidate ignored" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.invalid = true
	return nil
}

func fakeRig(bug string) custodytest.RuntimeRig {
	clock := &fakeClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	rt := &fakeRuntime{bug: bug, enrolled: custodytest.NewBinding("acme", "github"), life: time.Hour, clock: clock}
	return custodytest.RuntimeRig{
		Runtime: rt, Enrolled: rt.enrolled, Unenrolled: custodytest.NewBinding("acme", "github"),
		Lifetime: time.Hour, Advance: clock.Advance, Refreshes: func() int { return int(rt.issued.Load()) },
	}
}

// brokenRuntimes are the bugs TestRuntime is proved to catch.
var brokenRuntimes = []string{
	"stale while revalidate",
	"Invalidate ignored",
	"expiry from enrolment",
	"no cache",
	"no single flight",
}

func TestRuntimeRejectsBrokenRuntimes(t *testing.T) {
	suitetest.QuietRapid(t)
	suitetest.Accepts(t, "fakeRuntime", func(r *suitetest.Recorder) {
		custodytest.TestRuntime(r, func(*suitetest.Recorder) custodytest.RuntimeRig { return fakeRig("") })
	})
	for _, bug := range brokenRuntimes {
		suitetest.Rejects(t, bug, func(r *suitetest.Recorder) {
			custodytest.TestRuntime(r, func(*suitetest.Recorder) custodytest.RuntimeRig { return fakeRig(bug) })
		})
	}
}

func TestFakeRuntimeConforms(t *testing.T) {
	custodytest.TestRuntime(t, func(*testing.T) custodytest.RuntimeRig { return fakeRig("") })
}

// A bufferedStore is a handle on a shared mapStore that holds its last
// Put in a write buffer, flushed by the next write and by Close; the
// "forgets its buffer on Close" bug drops it instead.
type bufferedStore struct {
	shared *mapStore
	bug    string

	mu      sync.Mutex
	pending *custody.Record // guarded by mu
}

func (s *bufferedStore) flush(ctx context.Context) error {
	if s.pending == nil {
		return nil
	}
	err := s.shared.Put(ctx, *s.pending)
	s.pending = nil
	return err
}

func (s *bufferedStore) Put(ctx context.Context, rec custody.Record) error {
	if err := rec.Binding.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.flush(ctx); err != nil {
		return err
	}
	rec.Sealed = bytes.Clone(rec.Sealed)
	s.pending = &rec
	return nil
}

func (s *bufferedStore) Get(ctx context.Context, b custody.Binding) (custody.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending != nil && s.pending.Binding == b {
		return custody.Record{Binding: b, Sealed: bytes.Clone(s.pending.Sealed)}, nil
	}
	return s.shared.Get(ctx, b)
}

func (s *bufferedStore) CompareAndSwap(ctx context.Context, b custody.Binding, old, sealed []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.flush(ctx); err != nil {
		return err
	}
	return s.shared.CompareAndSwap(ctx, b, old, sealed)
}

func (s *bufferedStore) Delete(ctx context.Context, b custody.Binding) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.flush(ctx); err != nil {
		return err
	}
	return s.shared.Delete(ctx, b)
}

func (s *bufferedStore) List(ctx context.Context, namespace string) ([]custody.Binding, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.flush(ctx); err != nil {
		return nil, err
	}
	return s.shared.List(ctx, namespace)
}

func (s *bufferedStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bug == "forgets its write buffer on Close" {
		s.pending = nil
		return nil
	}
	return s.flush(context.Background())
}

func bufferedStorage(bug string) custodytest.Storage[*suitetest.Recorder] {
	shared := &mapStore{}
	return custodytest.Storage[*suitetest.Recorder]{
		Open:  func(*suitetest.Recorder) custody.Store { return &bufferedStore{shared: shared, bug: bug} },
		Close: func(_ *suitetest.Recorder, s custody.Store) error { return s.(*bufferedStore).Close() },
	}
}

func TestStoreReopenRejectsBrokenStores(t *testing.T) {
	suitetest.QuietRapid(t)
	suitetest.Accepts(t, "bufferedStore", func(r *suitetest.Recorder) {
		custodytest.TestStore(r, func(*suitetest.Recorder) custody.Store { return bufferedStorage("").Open(r) })
		custodytest.TestStoreReopen(r, func(*suitetest.Recorder) custodytest.Storage[*suitetest.Recorder] { return bufferedStorage("") })
	})
	suitetest.Rejects(t, "forgets its write buffer on Close", func(r *suitetest.Recorder) {
		custodytest.TestStoreReopen(r, func(*suitetest.Recorder) custodytest.Storage[*suitetest.Recorder] {
			return bufferedStorage("forgets its write buffer on Close")
		})
	})
}
