package custody

import (
	"context"
)

// A Record is one sealed credential as a Store keeps it: the key columns
// (Binding) and the sealed bytes. A Record never holds plaintext.
type Record struct {
	Binding Binding
	Sealed  []byte
}

// A Store keeps sealed records keyed by their Binding. It never sees
// plaintext and never stores a copy of the address beside the ciphertext:
// Get rebuilds Record.Binding from the key columns, and that is the address
// the record must open at.
//
// Implementations must be safe for concurrent use, must copy byte slices
// they are given or return, and must report failures of the backing store
// as *[StoreError], never as a Refusal. The package custodytest holds the
// conformance suite every implementation must pass.
type Store interface {
	// Put inserts rec, or replaces the record at rec.Binding. An invalid
	// binding is refused with address.CodeBindingInvalid.
	Put(ctx context.Context, rec Record) error
	// Get returns the record at b, or a Refusal with CodeRecordNotFound.
	Get(ctx context.Context, b Binding) (Record, error)
	// CompareAndSwap replaces the record at b with sealed only if it is
	// still old (byte for byte); otherwise it refuses with CodeRecordConflict, or
	// CodeRecordNotFound when nothing is stored at b.
	CompareAndSwap(ctx context.Context, b Binding, old, sealed []byte) error
	// Delete removes the record at b, or refuses with CodeRecordNotFound.
	Delete(ctx context.Context, b Binding) error
	// List returns the bindings stored under namespace, ordered by
	// integration and then handle. A namespace holding more than
	// [MaxListBindings] records is a *[StoreError], not a shorter list.
	List(ctx context.Context, namespace string) ([]Binding, error)
}

// MaxListBindings is the most bindings [Store.List] returns for one
// namespace (65536, far more credentials than a tenant holds). A store
// reads at most one row more, and a namespace that holds more is a
// *[StoreError]: rows a database writer added by the million cost one
// bound of memory, at the host's start ([Native.CheckNamespace]) and at
// each rewrap, not their number.
const MaxListBindings = 1 << 16

// A StoreError is a failure of the storage behind a Store (a broken
// connection, a full disk, a corrupt row), as opposed to a refusal. Its
// text never includes sealed bytes.
type StoreError struct {
	Op  string // the Store method, such as "get"
	Err error
}

// Error returns "custody: store OP: ERR".
func (e *StoreError) Error() string { return "custody: store " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *StoreError) Unwrap() error { return e.Err }
