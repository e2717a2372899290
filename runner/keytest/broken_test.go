package keytest_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/checkfu/checkfu/internal/suitetest"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/keytest"
)

var kek = bytes.Repeat([]byte{7}, 32)

// brokenWrapper is a small KeyWrapper an integrator might write, with
// one of the bugs integrators write switched on by name ("" is correct).
type brokenWrapper struct{ bug string }

func (w brokenWrapper) Wrap(_ context.Context, plain, ad []byte) ([]byte, error) {
	switch w.bug {
	case "copies the plaintext":
		return append([]byte("v1:"), plain...), nil
	case "fixed-key XOR":
		out := bytes.Clone(plain)
		for i := range out {
			out[i] ^= kek[i%len(kek)] + byte(i)
		}
		return out, nil
	case "unauthenticated stream":
		b, _ := aes.NewCipher(kek)
		iv := make([]byte, aes.BlockSize)
		rand.Read(iv)
		out := append(iv, make([]byte, len(plain))...)
		cipher.NewCTR(b, iv).XORKeyStream(out[aes.BlockSize:], plain)
		return out, nil
	}
	a, _ := chacha20poly1305.NewX(kek)
	nonce := make([]byte, a.NonceSize())
	if w.bug != "fixed nonce" {
		rand.Read(nonce)
	}
	if w.bug == "ignores associated data" {
		ad = nil
	}
	return a.Seal(nonce, nonce, plain, ad), nil
}

func (w brokenWrapper) Unwrap(_ context.Context, wrapped, ad []byte) ([]byte, error) {
	switch w.bug {
	case "copies the plaintext":
		p, ok := bytes.CutPrefix(wrapped, []byte("v1:"))
		if !ok {
			return nil, errors.New("bad prefix")
		}
		return bytes.Clone(p), nil
	case "fixed-key XOR":
		return w.Wrap(context.Background(), wrapped, ad)
	case "unauthenticated stream":
		if len(wrapped) < aes.BlockSize {
			return nil, errors.New("short")
		}
		b, _ := aes.NewCipher(kek)
		out := make([]byte, len(wrapped)-aes.BlockSize)
		cipher.NewCTR(b, wrapped[:aes.BlockSize]).XORKeyStream(out, wrapped[aes.BlockSize:])
		return out, nil
	}
	a, _ := chacha20poly1305.NewX(kek)
	n := a.NonceSize()
	if len(wrapped) < n+a.Overhead() {
		return nil, errors.New("short")
	}
	if w.bug == "ignores associated data" {
		ad = nil
	}
	if w.bug == "ignores trailing bytes" { // as a reader of a text file might
		wrapped = bytes.TrimRight(wrapped, "\x00\n")
	}
	var dst []byte
	if w.bug == "decrypts in place" {
		dst = wrapped[n:n]
	}
	p, err := a.Open(dst, wrapped[:n], wrapped[n:], ad)
	if err != nil {
		if w.bug == "error quotes the plaintext" {
			// decrypts without authenticating to say what it found
			return nil, fmt.Errorf("tag mismatch opening %q", unauthenticated(wrapped[n:], wrapped[:n]))
		}
		return nil, err
	}
	return p, nil
}

// unauthenticated decrypts an XChaCha20-Poly1305 ciphertext without its
// tag, as a debugging aid left in an error path would.
func unauthenticated(ct, nonce []byte) []byte {
	if len(ct) < 16 {
		return nil
	}
	a, _ := chacha20poly1305.NewX(kek)
	// Seal of zeros under the same nonce gives the keystream (offset by
	// the counter Poly1305 uses), and xor recovers the plaintext.
	ks := a.Seal(nil, nonce, make([]byte, len(ct)-16), nil)
	out := make([]byte, len(ct)-16)
	for i := range out {
		out[i] = ct[i] ^ ks[i]
	}
	return out
}

var brokenWrappers = []string{
	"copies the plaintext",
	"fixed-key XOR",
	"fixed nonce",
	"ignores associated data",
	"unauthenticated stream",
	"decrypts in place",
	"ignores trailing bytes",
	"error quotes the plaintext",
}

func TestKeyWrapperRejectsBrokenWrappers(t *testing.T) {
	suitetest.Accepts(t, "brokenWrapper without a bug", func(r *suitetest.Recorder) {
		keytest.TestKeyWrapper(r, func(*suitetest.Recorder) runner.KeyWrapper { return brokenWrapper{} })
	})
	for _, bug := range brokenWrappers {
		suitetest.Rejects(t, bug, func(r *suitetest.Recorder) {
			keytest.TestKeyWrapper(r, func(*suitetest.Recorder) runner.KeyWrapper { return brokenWrapper{bug: bug} })
		})
	}
}

// TestLocalKeyWrapper runs the suite against the runner's own wrapper.
func TestLocalKeyWrapper(t *testing.T) {
	keytest.TestKeyWrapper(t, func(t *testing.T) runner.KeyWrapper {
		w, err := runner.LocalKeyWrapper(kek)
		if err != nil {
			t.Fatal(err)
		}
		return w
	})
}

// A KMS adapter's test runs the suite against clients of one key. The
// suite runs under go test only (it takes a *testing.T), so this example
// compiles but does not run.
func ExampleTestKeyWrapper() {
	_ = func(t *testing.T) {
		key := make([]byte, 32) // a throwaway key; the adapter's is in the KMS
		rand.Read(key)
		keytest.TestKeyWrapper(t, func(t *testing.T) runner.KeyWrapper {
			w, err := runner.LocalKeyWrapper(key) // the adapter's client
			if err != nil {
				t.Fatal(err)
			}
			return w
		})
	}
}
