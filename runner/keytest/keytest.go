package keytest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/internal/suitetest"
	"github.com/checkfu/checkfu/runner"
)

// associated is the associated data the suite wraps under; a KeyFile
// uses its own header.
var associated = []byte("checkfu keytest associated data\n")

// canary is the plaintext the suite wraps: printable, so that a wrapper
// that puts it in an error or copies it into its output is caught by a
// plain substring search.
var canary = []byte("KEYTEST-CANARY-0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOP")

// TestKeyWrapper runs the conformance suite against the KeyWrapper that
// newWrapper returns. newWrapper is called once per subtest; two calls
// must return wrappers of the same key (a KMS adapter returns two
// clients of one key), since a key file written by one process is read
// by the next. T is *testing.T for an implementation's own tests; the
// type parameter lets the suite's tests run it under a recorder.
//
// The suite proves, through the interface only: round trips of several
// sizes, also across two wrappers; that the wrapped bytes hold the
// plaintext in none of its raw, hex or base64 forms; that wrapping is
// randomized; that Unwrap refuses, returning no plaintext, wrapped bytes
// with any one byte altered, truncated to any shorter length, or
// extended, and wrapped bytes presented with other associated data
// (another value, a prefix of it, none); that neither method keeps or
// aliases the caller's slices; that no error quotes the plaintext; and
// concurrent use (run it with -race).
//
// Proved to catch (the suite's own tests run it against each and fail if
// it ever accepts one): a wrapper that copies the plaintext; a fixed-key
// XOR stream; an AEAD under a fixed nonce; an AEAD that ignores the
// associated data; an unauthenticated stream cipher; an Unwrap that
// decrypts in place into the caller's slice; an Unwrap that ignores
// trailing bytes; an Unwrap whose error quotes what it decrypted.
//
// It cannot prove where the key lives, that it never leaves the KMS, or
// that a KMS's access policy is right: those are the deployment's.
func TestKeyWrapper[T testing.TB](t T, newWrapper func(t T) runner.KeyWrapper) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(testing.TB, func() runner.KeyWrapper)
	}{
		{"RoundTrip", testRoundTrip},
		{"HidesPlaintext", testHidesPlaintext},
		{"Randomized", testRandomized},
		{"RefusesAltered", testRefusesAltered},
		{"RefusesTruncatedOrExtended", testRefusesLength},
		{"BindsAssociatedData", testBindsAssociated},
		{"CopiesSlices", testCopiesSlices},
		{"ErrorsQuoteNoPlaintext", testErrorsQuoteNoPlaintext},
		{"Concurrent", testConcurrent},
	}
	for _, tc := range tests {
		suitetest.Run(t, tc.name, func(t T) { tc.fn(t, func() runner.KeyWrapper { return newWrapper(t) }) })
	}
}

func wrap(t testing.TB, w runner.KeyWrapper, plain []byte) []byte {
	t.Helper()
	out, err := w.Wrap(context.Background(), plain, associated)
	if err != nil {
		t.Fatalf("Wrap(%d bytes): %v", len(plain), err)
	}
	return out
}

// refused fails t unless Unwrap of wrapped under ad fails and returns
// no plaintext.
func refused(t testing.TB, w runner.KeyWrapper, what string, wrapped, ad []byte) {
	t.Helper()
	plain, err := w.Unwrap(context.Background(), wrapped, ad)
	if err == nil {
		t.Fatalf("Unwrap of %s succeeded (%d bytes), want an error", what, len(plain))
	}
	if len(plain) != 0 {
		t.Fatalf("Unwrap of %s failed but returned %d bytes", what, len(plain))
	}
}

func testRoundTrip(t testing.TB, newWrapper func() runner.KeyWrapper) {
	a, b := newWrapper(), newWrapper()
	for _, n := range []int{1, 32, 1000, 64 << 10} {
		plain := bytes.Repeat(canary, n/len(canary)+1)[:n]
		wrapped := wrap(t, a, plain)
		for name, w := range map[string]runner.KeyWrapper{"the same wrapper": a, "a second wrapper": b} {
			got, err := w.Unwrap(context.Background(), wrapped, associated)
			if err != nil {
				t.Fatalf("Unwrap with %s of %d bytes: %v", name, n, err)
			}
			if !bytes.Equal(got, plain) {
				t.Fatalf("Unwrap with %s of %d bytes returned other bytes", name, n)
			}
		}
	}
}

func testHidesPlaintext(t testing.TB, newWrapper func() runner.KeyWrapper) {
	wrapped := wrap(t, newWrapper(), canary)
	for form, b := range map[string][]byte{
		"raw": canary[8:40], "hex": []byte(hex.EncodeToString(canary[8:40])),
		"base64": []byte(base64.StdEncoding.EncodeToString(canary)[12:44]),
	} {
		if bytes.Contains(wrapped, b) || bytes.Contains(bytes.ToLower(wrapped), bytes.ToLower(b)) {
			t.Fatalf("the wrapped bytes hold the plaintext (%s)", form)
		}
	}
}

func testRandomized(t testing.TB, newWrapper func() runner.KeyWrapper) {
	w := newWrapper()
	a, b := wrap(t, w, canary), wrap(t, w, canary)
	if bytes.Equal(a, b) {
		t.Fatal("wrapping the same plaintext twice gave the same bytes; Wrap must be randomized")
	}
	// A reused nonce or keystream shows as c1 xor c2 = p1 xor p2 where
	// the plaintexts sit.
	other := bytes.Clone(canary)
	delta := make([]byte, len(canary))
	for i := range other {
		delta[i] = byte(i*7 + 3)
		other[i] ^= delta[i]
	}
	c := wrap(t, w, other)
	x := make([]byte, min(len(a), len(c)))
	for i := range x {
		x[i] = a[i] ^ c[i]
	}
	if bytes.Contains(x, delta[8:40]) {
		t.Fatal("two wraps xor to their plaintexts' xor: the same keystream is reused")
	}
}

func testRefusesAltered(t testing.TB, newWrapper func() runner.KeyWrapper) {
	w := newWrapper()
	wrapped := wrap(t, w, canary)
	for i := range wrapped {
		for _, mask := range []byte{0x01, 0x80} {
			bad := bytes.Clone(wrapped)
			bad[i] ^= mask
			refused(t, w, fmt.Sprintf("the wrapped bytes with byte %d xor %#x", i, mask), bad, associated)
		}
	}
}

func testRefusesLength(t testing.TB, newWrapper func() runner.KeyWrapper) {
	w := newWrapper()
	wrapped := wrap(t, w, canary)
	for n := range len(wrapped) {
		refused(t, w, fmt.Sprintf("the wrapped bytes cut to %d of %d", n, len(wrapped)), bytes.Clone(wrapped[:n]), associated)
	}
	for _, tail := range [][]byte{{0}, {1}, bytes.Clone(wrapped)} {
		refused(t, w, fmt.Sprintf("the wrapped bytes with %d bytes appended", len(tail)), append(bytes.Clone(wrapped), tail...), associated)
	}
}

func testBindsAssociated(t testing.TB, newWrapper func() runner.KeyWrapper) {
	w := newWrapper()
	wrapped := wrap(t, w, canary)
	for what, ad := range map[string][]byte{
		"other associated data": []byte("checkfu keytest associated dat4\n"),
		"a prefix of it":        associated[:len(associated)-1],
		"none":                  nil,
	} {
		refused(t, w, "wrapped bytes presented with "+what, wrapped, ad)
	}
}

func testCopiesSlices(t testing.TB, newWrapper func() runner.KeyWrapper) {
	w := newWrapper()
	plain := bytes.Clone(canary)
	wrapped := wrap(t, w, plain)
	kept := bytes.Clone(wrapped)
	clear(plain)
	got, err := w.Unwrap(context.Background(), wrapped, associated)
	if err != nil {
		t.Fatalf("Unwrap: %v", err)
	}
	if !bytes.Equal(got, canary) {
		t.Fatal("clearing the plaintext after Wrap changed what Unwrap returns: Wrap kept the caller's slice")
	}
	if !bytes.Equal(wrapped, kept) {
		t.Fatal("Unwrap changed the wrapped bytes it was given")
	}
	clear(got)
	again, err := w.Unwrap(context.Background(), wrapped, associated)
	if err != nil || !bytes.Equal(again, canary) {
		t.Fatalf("clearing Unwrap's result changed a later Unwrap (err %v)", err)
	}
}

func testErrorsQuoteNoPlaintext(t testing.TB, newWrapper func() runner.KeyWrapper) {
	w := newWrapper()
	wrapped := wrap(t, w, canary)
	for i := range wrapped {
		bad := bytes.Clone(wrapped)
		bad[i] ^= 1
		_, err := w.Unwrap(context.Background(), bad, associated)
		if err != nil && (bytes.Contains([]byte(err.Error()), canary[8:24]) || bytes.Contains([]byte(err.Error()), []byte(hex.EncodeToString(canary[8:24])))) {
			t.Fatalf("an Unwrap error quotes the plaintext: %v", err)
		}
	}
	_, err := w.Unwrap(context.Background(), wrapped, []byte("other"))
	if err != nil && bytes.Contains([]byte(err.Error()), canary[8:24]) {
		t.Fatalf("an Unwrap error quotes the plaintext: %v", err)
	}
}

func testConcurrent(t testing.TB, newWrapper func() runner.KeyWrapper) {
	w := newWrapper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			plain := append(bytes.Clone(canary), byte(i))
			for range 20 {
				wrapped, err := w.Wrap(context.Background(), plain, associated)
				if err != nil {
					errs <- err
					return
				}
				got, err := w.Unwrap(context.Background(), wrapped, associated)
				if err != nil || !bytes.Equal(got, plain) {
					errs <- fmt.Errorf("a concurrent round trip failed (err %v)", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
