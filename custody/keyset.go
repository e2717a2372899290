package custody

import (
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/checkfu/checkfu"
	"golang.org/x/crypto/chacha20poly1305"
)

// RootKeySize is the size in bytes of one key version's root key.
const RootKeySize = 32

// subkeyLabel separates the HKDF derivation of namespace subkeys from any
// other use of a root key.
const subkeyLabel = "checkfu custody namespace subkey v1"

// maxCachedSubkeys bounds the per-keyset cache of derived namespace AEADs.
const maxCachedSubkeys = 4096

// A Keyset is an ordered set of key versions, one of which is the primary.
// Records are sealed with the primary version and open with any version
// the keyset lists; [Keyset.Rewrap] moves a record to the primary. Each
// version's 32-byte root key never encrypts anything itself: every
// namespace gets its own XChaCha20-Poly1305 subkey, HKDF-SHA256(root,
// info = label || len(namespace) || namespace).
//
// Like a [Secret], a Keyset holds its key material only inside a closure,
// out of reach of fmt, reflection and encoders. A Keyset is immutable and
// safe for concurrent use; rotation returns a new Keyset. The zero Keyset
// holds no keys and every use of it is refused with [CodeKeysetInvalid].
type Keyset struct {
	_     [0]func()
	state func() *keysetState
}

type keysetState struct {
	primary  uint32
	versions []uint32 // ascending
	roots    map[uint32]*[RootKeySize]byte

	mu      sync.Mutex                                   // serialises writers of subkeys
	subkeys atomic.Pointer[map[subkeyName]*cachedSubkey] // derived namespace AEADs; copy on write
	last    atomic.Pointer[cachedSubkey]                 // the most recently used subkey
}

type subkeyName struct {
	version   uint32
	namespace string
}

type cachedSubkey struct {
	name subkeyName
	aead cipher.AEAD
}

func newKeyset(primary uint32, roots map[uint32]*[RootKeySize]byte) *Keyset {
	st := &keysetState{primary: primary, roots: roots}
	for v := range roots {
		st.versions = append(st.versions, v)
	}
	slices.Sort(st.versions)
	return &Keyset{state: func() *keysetState { return st }}
}

// GenerateKeyset returns a Keyset with one fresh random root key, version
// 1, as primary. Its key material cannot be exported: use it for tests and
// for deployments whose records need not outlive the process, and
// [NewKeyset] with keys kept in a KMS otherwise.
func GenerateKeyset() *Keyset {
	k := new([RootKeySize]byte)
	_, _ = rand.Read(k[:])
	return newKeyset(1, map[uint32]*[RootKeySize]byte{1: k})
}

// NewKeyset builds a Keyset from root keys by version. Every version must
// be at least 1, every key exactly [RootKeySize] bytes, and primary one of
// the versions. NewKeyset copies the key bytes; the caller keeps ownership
// of the Secrets and may destroy them afterwards.
func NewKeyset(primary uint32, roots map[uint32]*Secret) (*Keyset, error) {
	if len(roots) == 0 {
		return nil, checkfu.Refuse(CodeKeysetInvalid, "custody: a keyset needs at least one key version")
	}
	if _, ok := roots[primary]; !ok {
		return nil, checkfu.Refuse(CodeKeysetInvalid, "custody: primary version %d is not one of the keyset's versions", primary)
	}
	keys := make(map[uint32]*[RootKeySize]byte, len(roots))
	for v, s := range roots {
		if v == 0 {
			return nil, checkfu.Refuse(CodeKeysetInvalid, "custody: key version 0 is reserved (versions start at 1)")
		}
		k := new([RootKeySize]byte)
		err := s.reveal(func(b []byte) error {
			if len(b) != RootKeySize {
				return checkfu.Refuse(CodeKeysetInvalid, "custody: root key of version %d has %d bytes, want %d", v, len(b), RootKeySize)
			}
			copy(k[:], b)
			return nil
		})
		if err != nil {
			return nil, err
		}
		keys[v] = k
	}
	return newKeyset(primary, keys), nil
}

// load returns the keyset's state, refusing the zero Keyset.
func (ks *Keyset) load() (*keysetState, error) {
	if ks == nil || ks.state == nil {
		return nil, errZeroKeyset()
	}
	return ks.state(), nil
}

// errZeroKeyset is load's refusal, out of line so that load inlines.
func errZeroKeyset() error {
	return checkfu.Refuse(CodeKeysetInvalid, "custody: the zero Keyset holds no keys")
}

// Primary returns the version new records are sealed with, or 0 for the
// zero Keyset.
func (ks *Keyset) Primary() uint32 {
	st, err := ks.load()
	if err != nil {
		return 0
	}
	return st.primary
}

// Versions returns the versions the keyset opens, ascending.
func (ks *Keyset) Versions() []uint32 {
	st, err := ks.load()
	if err != nil {
		return nil
	}
	return slices.Clone(st.versions)
}

// Rotate returns a new Keyset that keeps every version of ks and adds a
// fresh random root key, one version above the highest, as primary.
// Records sealed under older versions keep opening until they are
// rewrapped and the old version is removed with [Keyset.Without].
func (ks *Keyset) Rotate() (*Keyset, error) {
	st, err := ks.load()
	if err != nil {
		return nil, err
	}
	next := st.versions[len(st.versions)-1] + 1
	if next == 0 {
		return nil, checkfu.Refuse(CodeKeysetInvalid, "custody: key versions are exhausted")
	}
	roots := make(map[uint32]*[RootKeySize]byte, len(st.roots)+1)
	for v, k := range st.roots {
		roots[v] = k
	}
	k := new([RootKeySize]byte)
	_, _ = rand.Read(k[:])
	roots[next] = k
	return newKeyset(next, roots), nil
}

// Without returns a new Keyset without version v. Records still sealed
// under v will no longer open (refused with [CodeKeyVersionUnknown]):
// rewrap them first. Removing the primary or an unknown version is
// refused.
func (ks *Keyset) Without(v uint32) (*Keyset, error) {
	st, err := ks.load()
	if err != nil {
		return nil, err
	}
	if v == st.primary {
		return nil, checkfu.Refuse(CodeKeysetInvalid, "custody: version %d is the primary; rotate before removing it", v)
	}
	if _, ok := st.roots[v]; !ok {
		return nil, checkfu.Refuse(CodeKeysetInvalid, "custody: version %d is not in the keyset", v)
	}
	roots := make(map[uint32]*[RootKeySize]byte, len(st.roots)-1)
	for u, k := range st.roots {
		if u != v {
			roots[u] = k
		}
	}
	return newKeyset(st.primary, roots), nil
}

// String returns a description of the versions, such as
// "custody.Keyset(primary=2 versions=[1 2])"; it never shows key material.
func (ks *Keyset) String() string {
	st, err := ks.load()
	if err != nil {
		return "custody.Keyset(zero)"
	}
	vs := make([]string, len(st.versions))
	for i, v := range st.versions {
		vs[i] = strconv.FormatUint(uint64(v), 10)
	}
	return fmt.Sprintf("custody.Keyset(primary=%d versions=[%s])", st.primary, strings.Join(vs, " "))
}

// aead returns the namespace subkey AEAD of version v, deriving and caching
// it on first use. It refuses versions the keyset does not list. The check
// of the most recently used subkey inlines into the callers.
func (st *keysetState) aead(v uint32, namespace string) (cipher.AEAD, error) {
	if c := st.last.Load(); c != nil && c.name.version == v && c.name.namespace == namespace {
		return c.aead, nil
	}
	return st.aeadSlow(v, namespace)
}

// aeadSlow is aead for a subkey other than the most recently used one: it
// looks in the cache, and derives and caches the subkey on a miss.
func (st *keysetState) aeadSlow(v uint32, namespace string) (cipher.AEAD, error) {
	name := subkeyName{v, namespace}
	if m := st.subkeys.Load(); m != nil {
		if c, ok := (*m)[name]; ok {
			st.last.Store(c)
			return c.aead, nil
		}
	}
	root, ok := st.roots[v]
	if !ok {
		return nil, checkfu.Refuse(CodeKeyVersionUnknown, "custody: key version %d is not in the keyset (versions %v); was it removed before the record was rewrapped?", v, st.versions)
	}
	info := appendLP([]byte(subkeyLabel), []byte(namespace))
	sub, err := hkdf.Key(sha256.New, root[:], nil, string(info), chacha20poly1305.KeySize)
	if err != nil {
		return nil, fmt.Errorf("custody: deriving subkey: %w", err)
	}
	a, err := chacha20poly1305.NewX(sub)
	clear(sub)
	if err != nil {
		return nil, fmt.Errorf("custody: building AEAD: %w", err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	next := map[subkeyName]*cachedSubkey{}
	if m := st.subkeys.Load(); m != nil && len(*m) < maxCachedSubkeys {
		maps.Copy(next, *m)
	}
	c := &cachedSubkey{name, a}
	next[name] = c
	st.subkeys.Store(&next)
	st.last.Store(c)
	return a, nil
}
