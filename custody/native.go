package custody

import (
	"context"
	"errors"

	"github.com/checkfu/checkfu"
)

// Native is native custody (checkfu's own store, addressed by the custody
// binding rather than by workspace): credentials sealed with a Keyset into
// a Store, addressed by their Binding. It is the only path from a stored
// record to a Secret: the address it opens at is always the one the Store
// rebuilt from its key columns.
//
// A Native is safe for concurrent use. The zero Native has no keys and no
// store and refuses everything.
type Native struct {
	keys  *Keyset
	store Store
}

// NewNative returns native custody over keys and store. To rotate, build a
// new Native with the rotated keyset and call [Native.Rewrap] on each
// binding (or [Native.RewrapNamespace]).
func NewNative(keys *Keyset, store Store) *Native {
	return &Native{keys: keys, store: store}
}

func (n *Native) check() error {
	if n == nil || n.store == nil {
		return &StoreError{"open", errors.New("native custody has no store")}
	}
	_, err := n.keys.load()
	return err
}

// Put seals s for b under the primary key version and stores it,
// replacing any record at b. The caller keeps ownership of s.
func (n *Native) Put(ctx context.Context, b Binding, s *Secret) error {
	if err := n.check(); err != nil {
		return err
	}
	sealed, err := n.keys.Seal(b, s)
	if err != nil {
		return err
	}
	return n.store.Put(ctx, Record{Binding: b, Sealed: sealed})
}

// Open reads the record at b and opens it at the address the store
// returned. The result is a Secret, which nothing outside this package's
// outbound edge can read; the caller should Destroy it when done.
func (n *Native) Open(ctx context.Context, b Binding) (*Secret, error) {
	if err := n.check(); err != nil {
		return nil, err
	}
	rec, err := n.get(ctx, b)
	if err != nil {
		return nil, err
	}
	return n.keys.Open(rec.Binding, rec.Sealed)
}

// get reads the record at b and refuses it with [CodeAddressMismatch]
// unless the store rebuilt exactly b from the row's key columns. A store
// that matched another row (a case-insensitive collation, say, which would
// serve namespace "acme" to a request for "Acme") would otherwise hand
// back a record that opens, at the other row's address.
func (n *Native) get(ctx context.Context, b Binding) (Record, error) {
	rec, err := n.store.Get(ctx, b)
	if err != nil {
		return Record{}, err
	}
	if rec.Binding != b {
		return Record{}, checkfu.Refuse(CodeAddressMismatch, "custody: the store returned the record at %s for %s", rec.Binding, b)
	}
	return rec, nil
}

// Rewrap re-seals the record at b under the primary key version. It uses
// Store.CompareAndSwap, so a record replaced concurrently is never
// overwritten with its older value: that case is refused with
// CodeRecordConflict, and the newer record (already under the primary) stays.
func (n *Native) Rewrap(ctx context.Context, b Binding) error {
	if err := n.check(); err != nil {
		return err
	}
	rec, err := n.get(ctx, b)
	if err != nil {
		return err
	}
	v, err := SealedKeyVersion(rec.Sealed)
	if err != nil {
		return err
	}
	if v == n.keys.Primary() {
		return nil
	}
	sealed, err := n.keys.Rewrap(rec.Binding, rec.Sealed)
	if err != nil {
		return err
	}
	return n.store.CompareAndSwap(ctx, rec.Binding, rec.Sealed, sealed)
}

// RewrapNamespace rewraps every record under namespace and returns how
// many it visited. It stops at the first error.
func (n *Native) RewrapNamespace(ctx context.Context, namespace string) (int, error) {
	if err := n.check(); err != nil {
		return 0, err
	}
	bs, err := n.store.List(ctx, namespace)
	if err != nil {
		return 0, err
	}
	for i, b := range bs {
		if err := n.Rewrap(ctx, b); err != nil {
			return i, err
		}
	}
	return len(bs), nil
}

// CheckNamespace opens every record under namespace, discarding each
// plaintext at once, and returns how many opened. It stops at the first
// record that does not open: a record sealed under keys the keyset does
// not hold is refused with [CodeAddressMismatch] (another root key under
// the same version) or [CodeKeyVersionUnknown]. A host calls it at start,
// so that keys lost across a restart are reported there and not as a
// failure of the first call that needs the credential.
func (n *Native) CheckNamespace(ctx context.Context, namespace string) (int, error) {
	if err := n.check(); err != nil {
		return 0, err
	}
	bs, err := n.store.List(ctx, namespace)
	if err != nil {
		return 0, err
	}
	for i, b := range bs {
		rec, err := n.get(ctx, b)
		if err != nil {
			return i, err
		}
		s, err := n.keys.Open(rec.Binding, rec.Sealed)
		if err != nil {
			return i, err
		}
		s.Destroy()
	}
	return len(bs), nil
}

// Delete removes the record at b.
func (n *Native) Delete(ctx context.Context, b Binding) error {
	if err := n.check(); err != nil {
		return err
	}
	return n.store.Delete(ctx, b)
}
