package custody

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/checkfu/checkfu"
)

// A MemStore is a Store in memory, for tests and single-process
// deployments whose records need not survive a restart. The zero MemStore
// is empty and ready to use.
type MemStore struct {
	mu      sync.Mutex
	records map[Binding][]byte // guarded by mu
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{} }

// Put implements Store.
func (m *MemStore) Put(ctx context.Context, rec Record) error {
	if err := rec.Binding.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &StoreError{"put", err}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.records == nil {
		m.records = map[Binding][]byte{}
	}
	m.records[rec.Binding] = bytes.Clone(rec.Sealed)
	return nil
}

// Get implements Store.
func (m *MemStore) Get(ctx context.Context, b Binding) (Record, error) {
	if err := b.Validate(); err != nil {
		return Record{}, err
	}
	if err := ctx.Err(); err != nil {
		return Record{}, &StoreError{"get", err}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.records[b]
	if !ok {
		return Record{}, notFound(b)
	}
	return Record{Binding: b, Sealed: bytes.Clone(s)}, nil
}

// CompareAndSwap implements Store.
func (m *MemStore) CompareAndSwap(ctx context.Context, b Binding, old, sealed []byte) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &StoreError{"compare_and_swap", err}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.records[b]
	if !ok {
		return notFound(b)
	}
	if !bytes.Equal(s, old) {
		return conflict(b)
	}
	m.records[b] = bytes.Clone(sealed)
	return nil
}

// Delete implements Store.
func (m *MemStore) Delete(ctx context.Context, b Binding) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &StoreError{"delete", err}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.records[b]; !ok {
		return notFound(b)
	}
	delete(m.records, b)
	return nil
}

// List implements Store.
func (m *MemStore) List(ctx context.Context, namespace string) ([]Binding, error) {
	if err := checkName("namespace", namespace); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &StoreError{"list", err}
	}
	m.mu.Lock()
	var out []Binding
	for b := range m.records {
		if b.Namespace == namespace {
			out = append(out, b)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, CompareBindings)
	return out, nil
}

// CompareBindings orders bindings by namespace, integration and handle,
// comparing bytes. It is the order of [Store.List].
func CompareBindings(a, b Binding) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	if c := strings.Compare(a.Integration, b.Integration); c != 0 {
		return c
	}
	return strings.Compare(a.Handle.s, b.Handle.s)
}

// notFound returns the CodeNotFound refusal for b. Store implementations
// outside this package build the same refusal with [checkfu.Refuse].
func notFound(b Binding) error {
	return checkfu.Refuse(CodeNotFound, "custody: no record at %s", b)
}

func conflict(b Binding) error {
	return checkfu.Refuse(CodeConflict, "custody: the record at %s changed since it was read", b)
}
