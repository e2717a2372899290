package custody

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/internal/reveal"
)

// redacted is what every text form of a Secret prints.
const redacted = "[redacted]"

// A Secret holds credential bytes (a provider token, an API key, a root
// key) so that nothing a sandbox, a provider response, an event, a log
// line or an error can reach reads them back, and so that no accident
// (printing, logging, marshalling) reveals them. Within this module only
// the custody boundary and its outbound edge (custody/edge) read them. It
// is not a boundary against code running in the trusted process, which
// can seal a Secret under a root key it knows and decrypt the record (see
// the package documentation).
//
// The Secret value itself holds no secret bytes and no pointer that
// reflection can follow to them: its only field is a closure, and Go's
// reflection cannot look inside a closure. So fmt (every verb, including
// when the Secret sits in an unexported field of another struct or behind
// a pointer, where fmt ignores methods and walks fields by reflection),
// log/slog (text and JSON handlers), encoding/json, encoding/gob and error
// strings can print at most a code address. On top of that, every text
// method (String, GoString, Format, LogValue, MarshalJSON, MarshalText)
// returns "[redacted]".
//
// The bytes are revealed only inside a callback, by unexported code at the
// outbound edge of this package (and, through an internal package that Go
// forbids anything outside custody/ to import, by reference runtimes below
// custody/). There is deliberately no exported method that returns or
// reveals the bytes: an exported method could be called through an
// interface assertion by a package that may not import custody (acp,
// adapters), which would bypass the import law.
//
// The zero Secret holds nothing and every use of it is refused with
// [CodeSecretDestroyed]. A Secret is safe for concurrent use. Copying a
// Secret value copies the reference, not the bytes: Destroy on any copy
// destroys them for all.
type Secret struct {
	_   [0]func() // not comparable: == on two Secrets would be meaningless
	box func() *secretBox
}

// secretBox is where the bytes live. It is reachable only from the closure
// in a Secret.
type secretBox struct {
	mu        sync.Mutex
	b         []byte // guarded by mu; nil after destroy
	destroyed bool   // guarded by mu
}

// NewSecret takes ownership of b: it copies b into custody and overwrites
// the caller's slice with zeros, so the plaintext exists in one place only.
// The caller must not rely on b afterwards. An empty b gives a Secret of
// length zero, which is valid (some providers use empty passwords).
func NewSecret(b []byte) *Secret {
	s, owned := newSecretBuffer(len(b))
	copy(owned, b)
	clear(b)
	return s
}

// newSecretBuffer returns a Secret that holds n zero bytes, and those
// bytes (length and capacity n), for code in this package that fills them
// in place (copying, or decrypting, into them) before the Secret is used.
//
// Up to secretInlineMax bytes live in the same allocation as the box, so a
// small Secret costs two allocations (the box and the closure) instead of
// three. Only the closure leads to either.
func newSecretBuffer(n int) (*Secret, []byte) {
	// Each array length is a malloc size class (64, 80, 96, 112, 128,
	// 144, 176, 208, 256, 320, 384, 512, 640, 768, 1024 bytes: steps of
	// at most 25% above 64) minus the 48 bytes of the Secret and its box,
	// so the allocation is no bigger than the bytes need. The garbage
	// collector's cost grows with the bytes allocated, and a Secret is
	// allocated on every Open (docs/benchmarks/custody.md).
	switch {
	case n <= 16:
		return newInlineSecret(func(a *[16]byte) []byte { return a[:] }, n)
	case n <= 32:
		return newInlineSecret(func(a *[32]byte) []byte { return a[:] }, n)
	case n <= 48:
		return newInlineSecret(func(a *[48]byte) []byte { return a[:] }, n)
	case n <= 64:
		return newInlineSecret(func(a *[64]byte) []byte { return a[:] }, n)
	case n <= 80:
		return newInlineSecret(func(a *[80]byte) []byte { return a[:] }, n)
	case n <= 96:
		return newInlineSecret(func(a *[96]byte) []byte { return a[:] }, n)
	case n <= 128:
		return newInlineSecret(func(a *[128]byte) []byte { return a[:] }, n)
	case n <= 160:
		return newInlineSecret(func(a *[160]byte) []byte { return a[:] }, n)
	case n <= 208:
		return newInlineSecret(func(a *[208]byte) []byte { return a[:] }, n)
	case n <= 272:
		return newInlineSecret(func(a *[272]byte) []byte { return a[:] }, n)
	case n <= 336:
		return newInlineSecret(func(a *[336]byte) []byte { return a[:] }, n)
	case n <= 464:
		return newInlineSecret(func(a *[464]byte) []byte { return a[:] }, n)
	case n <= 592:
		return newInlineSecret(func(a *[592]byte) []byte { return a[:] }, n)
	case n <= 720:
		return newInlineSecret(func(a *[720]byte) []byte { return a[:] }, n)
	case n <= secretInlineMax:
		return newInlineSecret(func(a *[secretInlineMax]byte) []byte { return a[:] }, n)
	}
	buf := make([]byte, n)
	a := &secretAlloc{box: secretBox{b: buf}}
	seat(&a.s, &a.box)
	return &a.s, buf
}

// secretInlineMax is the largest buffer newSecretBuffer places in the
// Secret's own allocation.
const secretInlineMax = 976

// newInlineSecret is newSecretBuffer with the buffer in an array of type
// A, inside the allocation of the Secret and its box; bytes slices it.
func newInlineSecret[A any](bytes func(*A) []byte, n int) (*Secret, []byte) {
	a := new(inlineSecretAlloc[A])
	buf := bytes(&a.buf)[:n:n]
	a.box.b = buf
	seat(&a.s, &a.box)
	return &a.s, buf
}

// seat points s at box through a new closure. It is not generic, so the
// closure holds the box pointer alone (a closure made inside a generic
// function also carries the instantiation's dictionary: 24 bytes, not 16).
func seat(s *Secret, box *secretBox) {
	s.box = func() *secretBox { return box }
}

// secretAlloc places a Secret and its box in one allocation. Only the
// closure leads from the Secret to the box.
type secretAlloc struct {
	s   Secret
	box secretBox
}

// inlineSecretAlloc is a secretAlloc with the bytes too. The array comes
// last, after every pointer, so the garbage collector does not scan it.
type inlineSecretAlloc[A any] struct {
	s   Secret
	box secretBox
	buf A
}

// Destroy overwrites the bytes with zeros and forgets them. Every later
// use of s (or of any copy of it) is refused with [CodeSecretDestroyed].
// Destroy is idempotent and safe to call on a nil or zero Secret.
func (s *Secret) Destroy() {
	if s == nil || s.box == nil {
		return
	}
	box := s.box()
	box.mu.Lock()
	defer box.mu.Unlock()
	clear(box.b)
	box.b = nil
	box.destroyed = true
}

// Destroyed reports whether s is nil, zero, or destroyed, that is whether
// every use of it will be refused.
func (s *Secret) Destroyed() bool {
	if s == nil || s.box == nil {
		return true
	}
	box := s.box()
	box.mu.Lock()
	defer box.mu.Unlock()
	return box.destroyed
}

// reveal calls use with a private copy of the bytes and zeroes that copy
// when use returns, so bytes that use retains by mistake read as zeros.
// use must not keep the slice or let it escape into an error, a log line
// or a returned value. reveal returns use's error unchanged, or a Refusal
// with [CodeSecretDestroyed].
func (s *Secret) reveal(use func([]byte) error) error {
	if s == nil || s.box == nil {
		return checkfu.Refuse(CodeSecretDestroyed, "custody: the zero Secret holds nothing")
	}
	box := s.box()
	box.mu.Lock()
	if box.destroyed {
		box.mu.Unlock()
		return checkfu.Refuse(CodeSecretDestroyed, "custody: the Secret was destroyed")
	}
	tmp := make([]byte, len(box.b))
	copy(tmp, box.b)
	box.mu.Unlock()
	defer clear(tmp)
	return use(tmp)
}

// rlock returns the Secret's box with its lock held, so that code in this
// package that provably neither retains nor modifies the bytes (sealing
// them) can read box.b without a copy. The caller must call
// box.mu.Unlock. Anything else uses reveal.
func (s *Secret) rlock() (*secretBox, error) {
	if s == nil || s.box == nil {
		return nil, errZeroSecret()
	}
	box := s.box()
	box.mu.Lock()
	if box.destroyed {
		box.mu.Unlock()
		return nil, errDestroyed()
	}
	return box, nil
}

// errZeroSecret and errDestroyed are the refusals of a zero or destroyed
// Secret, out of line so that rlock inlines.
func errZeroSecret() error {
	return checkfu.Refuse(CodeSecretDestroyed, "custody: the zero Secret holds nothing")
}

func errDestroyed() error {
	return checkfu.Refuse(CodeSecretDestroyed, "custody: the Secret was destroyed")
}

// revealAny adapts reveal to the internal/reveal hook.
func revealAny(secret any, use func([]byte) error) error {
	s, ok := secret.(*Secret)
	if !ok {
		return fmt.Errorf("custody: reveal of %T, want *custody.Secret", secret)
	}
	return s.reveal(use)
}

var _ = reveal.Register(revealAny)

// String returns "[redacted]".
func (Secret) String() string { return redacted }

// GoString returns "custody.Secret([redacted])", so %#v shows the type
// but not the bytes.
func (Secret) GoString() string { return "custody.Secret(" + redacted + ")" }

// Format implements fmt.Formatter: every verb and flag prints
// "[redacted]" (%#v prints the GoString form).
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = f.Write([]byte(s.GoString()))
		return
	}
	_, _ = f.Write([]byte(redacted))
}

// LogValue implements slog.LogValuer: a Secret logs as "[redacted]".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON implements json.Marshaler: a Secret encodes as the JSON
// string "[redacted]".
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText implements encoding.TextMarshaler: a Secret encodes as
// "[redacted]".
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
