package runner

import (
	"context"
	"crypto/rand"
	"errors"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/checkfu/checkfu"
)

// A KeyWrapper seals the key file's contents under a key it keeps and
// never hands out: a KMS's encrypt and decrypt, or, for a host without
// one, LocalKeyWrapper. It is the interface a KMS adapter implements;
// package runner/keytest holds the suite that proves one.
//
// Wrap must be authenticated encryption bound to associated (a KMS's
// "encryption context"): Unwrap refuses wrapped bytes that were altered,
// truncated, or wrapped with other associated data, and returns nothing
// but an error then. Wrap must be randomized, so that wrapping the same
// keys twice gives different bytes, and neither method may keep or alias
// the slices it is given or put plaintext in an error. Both must be safe
// for concurrent use.
type KeyWrapper interface {
	// Wrap seals plaintext, bound to associated.
	Wrap(ctx context.Context, plaintext, associated []byte) ([]byte, error)
	// Unwrap opens what Wrap sealed with the same associated data.
	Unwrap(ctx context.Context, wrapped, associated []byte) ([]byte, error)
}

// LocalKeyWrapperKeySize is the size of LocalKeyWrapper's key.
const LocalKeyWrapperKeySize = chacha20poly1305.KeySize

// LocalKeyWrapper returns a KeyWrapper that seals with
// XChaCha20-Poly1305 under kek, a LocalKeyWrapperKeySize-byte key the
// host keeps apart from the key file (an environment the orchestrator
// injects, a mounted secret): whoever reads both holds every key. It
// copies kek; the caller may clear its copy. A key of another size is
// refused with checkfu.CodeConfigInvalid.
func LocalKeyWrapper(kek []byte) (KeyWrapper, error) {
	if len(kek) != LocalKeyWrapperKeySize {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: a local key wrapper's key is %d bytes, want %d", len(kek), LocalKeyWrapperKeySize)
	}
	a, err := chacha20poly1305.NewX(kek)
	if err != nil {
		return nil, err
	}
	return localWrapper{seal: a.Seal, open: a.Open}, nil
}

// localWrapper holds its AEAD's methods only, so that printing it prints
// no key.
type localWrapper struct {
	_    [0]func()
	seal func(dst, nonce, plaintext, ad []byte) []byte
	open func(dst, nonce, ciphertext, ad []byte) ([]byte, error)
}

func (w localWrapper) Wrap(_ context.Context, plaintext, associated []byte) ([]byte, error) {
	nonce := make([]byte, chacha20poly1305.NonceSizeX, chacha20poly1305.NonceSizeX+len(plaintext)+chacha20poly1305.Overhead)
	_, _ = rand.Read(nonce)
	return w.seal(nonce, nonce, plaintext, associated), nil
}

func (w localWrapper) Unwrap(_ context.Context, wrapped, associated []byte) ([]byte, error) {
	if len(wrapped) < chacha20poly1305.NonceSizeX+chacha20poly1305.Overhead {
		return nil, errors.New("runner: wrapped keys are truncated")
	}
	n := chacha20poly1305.NonceSizeX
	plain, err := w.open(nil, wrapped[:n], wrapped[n:], associated)
	if err != nil {
		return nil, errors.New("runner: wrapped keys do not open under this key")
	}
	return plain, nil
}

// String returns "runner.LocalKeyWrapper(redacted)".
func (localWrapper) String() string { return "runner.LocalKeyWrapper(redacted)" }
