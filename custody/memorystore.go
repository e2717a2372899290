package custody

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
)

// A MemoryStore is a Store in memory, for tests and single-process
// deployments whose records need not survive a restart. The zero MemoryStore
// is empty and ready to use.
type MemoryStore struct {
	mu      sync.Mutex
	records map[Binding][]byte // guarded by mu
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// Put implements Store.
func (m *MemoryStore) Put(ctx context.Context, rec Record) error {
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
func (m *MemoryStore) Get(ctx context.Context, b Binding) (Record, error) {
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
func (m *MemoryStore) CompareAndSwap(ctx context.Context, b Binding, old, sealed []byte) error {
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
func (m *MemoryStore) Delete(ctx context.Context, b Binding) error {
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
func (m *MemoryStore) List(ctx context.Context, namespace string) ([]Binding, error) {
	if err := address.CheckNamespace(namespace); err != nil {
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
	if len(out) > MaxListBindings {
		return nil, &StoreError{"list", errTooManyBindings}
	}
	slices.SortFunc(out, address.CompareBindings)
	return out, nil
}

// errTooManyBindings is the cause of List's StoreError for a namespace
// of more than MaxListBindings records.
var errTooManyBindings = errors.New("custody: the namespace holds more than MaxListBindings records")

// notFound returns the CodeRecordNotFound refusal for b. Store implementations
// outside this package build the same refusal with [checkfu.Refuse].
func notFound(b Binding) error {
	return checkfu.Refuse(CodeRecordNotFound, "custody: no record at %s", b)
}

func conflict(b Binding) error {
	return checkfu.Refuse(CodeRecordConflict, "custody: the record at %s changed since it was read", b)
}
