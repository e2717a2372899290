package eventlog

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/checkfu/checkfu"
)

// KeySize is the size of the master key [NewKeys] takes.
const KeySize = 32

// Keys hold the two keys a log derives from one workspace master key: the
// key-encryption key that wraps each event's data key, and the key of the
// keyed content digest (HMAC-SHA256). The key bytes never leave the value:
// every way of printing or marshalling Keys prints "eventlog.Keys(redacted)".
//
// The zero Keys is not usable; build Keys with [NewKeys].
type Keys struct {
	wrap [32]byte
	mac  [32]byte
	ok   bool
}

// NewKeys derives Keys from a [KeySize]-byte master key with HKDF-SHA256.
// The master key is not retained.
func NewKeys(master []byte) (*Keys, error) {
	if len(master) != KeySize {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "eventlog: master key is %d bytes, want %d", len(master), KeySize)
	}
	k := &Keys{ok: true}
	for _, d := range []struct {
		info string
		out  *[32]byte
	}{{"checkfu/eventlog/wrap/v1", &k.wrap}, {"checkfu/eventlog/digest/v1", &k.mac}} {
		b, err := hkdf.Key(sha256.New, master, nil, d.info, 32)
		if err != nil {
			return nil, fmt.Errorf("eventlog: derive keys: %w", err)
		}
		copy(d.out[:], b)
	}
	return k, nil
}

// String returns "eventlog.Keys(redacted)".
func (k *Keys) String() string { return "eventlog.Keys(redacted)" }

// GoString returns "eventlog.Keys(redacted)".
func (k *Keys) GoString() string { return k.String() }

// Format prints "eventlog.Keys(redacted)" for every verb.
func (k *Keys) Format(f fmt.State, _ rune) { f.Write([]byte(k.String())) }

// MarshalText returns "eventlog.Keys(redacted)", never key bytes.
func (k *Keys) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// digest returns the keyed digest of content in session.
func (k *Keys) digest(session string, content []byte) Hash {
	m := hmac.New(sha256.New, k.mac[:])
	m.Write(appendString([]byte("checkfu/eventlog/digest/v1\x00"), session))
	m.Write(content)
	var out Hash
	m.Sum(out[:0])
	return out
}

func contentAD(domain, session string, mac Hash) []byte {
	return append(appendString([]byte(domain), session), mac[:]...)
}

// shredTag returns the tag a shred event carries: HMAC-SHA256 under the
// digest key over the session, the shredded seq and that event's chain
// hash. Only a holder of the keys can make it, so a shred event appended
// by someone who can only write the store does not verify.
func (k *Keys) shredTag(session string, seq uint64, target Hash) Hash {
	m := hmac.New(sha256.New, k.mac[:])
	m.Write(appendString([]byte("checkfu/eventlog/shred/v1\x00"), session))
	m.Write(binary.BigEndian.AppendUint64(nil, seq))
	m.Write(target[:])
	var out Hash
	m.Sum(out[:0])
	return out
}

// seal encrypts content under a fresh data key and wraps that key. It
// returns the wrapped key and the ciphertext, both nonce-prefixed.
func (k *Keys) seal(session string, mac Hash, content []byte) (wrappedKey, sealed []byte, err error) {
	var dataKey [chacha20poly1305.KeySize]byte
	if _, err := rand.Read(dataKey[:]); err != nil {
		return nil, nil, err
	}
	sealed, err = xseal(dataKey[:], contentAD("checkfu/eventlog/content/v1\x00", session, mac), content)
	if err != nil {
		return nil, nil, err
	}
	wrappedKey, err = xseal(k.wrap[:], contentAD("checkfu/eventlog/datakey/v1\x00", session, mac), dataKey[:])
	clear(dataKey[:])
	return wrappedKey, sealed, err
}

// open reverses seal and checks the plaintext against mac.
func (k *Keys) open(session string, mac Hash, wrappedKey, sealed []byte) ([]byte, error) {
	dataKey, err := xopen(k.wrap[:], contentAD("checkfu/eventlog/datakey/v1\x00", session, mac), wrappedKey)
	if err != nil {
		return nil, err
	}
	defer clear(dataKey)
	content, err := xopen(dataKey, contentAD("checkfu/eventlog/content/v1\x00", session, mac), sealed)
	if err != nil {
		return nil, err
	}
	if got := k.digest(session, content); !hmac.Equal(got[:], mac[:]) {
		return nil, fmt.Errorf("content does not match its digest")
	}
	return content, nil
}

func xseal(key, ad, plaintext []byte) ([]byte, error) {
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, err
	}
	return aead.Seal(out, out, plaintext, ad), nil
}

func xopen(key, ad, box []byte) ([]byte, error) {
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, err
	}
	if len(box) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("sealed value too short")
	}
	out, err := aead.Open(nil, box[:aead.NonceSize()], box[aead.NonceSize():], ad)
	if err != nil {
		return nil, fmt.Errorf("sealed value does not open")
	}
	return out, nil
}
