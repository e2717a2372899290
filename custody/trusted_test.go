package custody_test

import (
	"bytes"
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
)

// TestTrustedCodeIsNotFencedOff pins the decision of issue 11, finding 10,
// as doc.go and docs/custody.md state it: a Secret is a boundary against
// every path that a sandbox, a provider response, an event, a log line or
// an error can reach, and against accident; it is not a boundary against
// code running in the trusted process. Such code can build a Keyset from a
// root key it knows, seal any Secret it holds (or Put it through a Native
// over a store it reads) and decrypt the record with the documented
// layout. If this test starts failing, the guarantee changed: change the
// docs with it.
func TestTrustedCodeIsNotFencedOff(t *testing.T) {
	const canary = "ghp_trusted-process-canary-1234567890"
	root := bytes.Repeat([]byte{0x42}, custody.RootKeySize)
	ks, err := custody.NewKeyset(1, map[uint32]*custody.Secret{1: custody.NewSecret(bytes.Clone(root))})
	if err != nil {
		t.Fatal(err)
	}
	b := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()}

	sealed, err := ks.Seal(b, custody.NewSecret([]byte(canary)))
	if err != nil {
		t.Fatal(err)
	}
	if got := openByLayout(t, root, b, sealed); got != canary {
		t.Fatalf("decrypting by the documented layout gave %q", got)
	}

	store := custody.NewMemoryStore()
	if err := custody.NewNative(ks, store).Put(context.Background(), b, custody.NewSecret([]byte(canary))); err != nil {
		t.Fatal(err)
	}
	rec, err := store.Get(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if got := openByLayout(t, root, b, rec.Sealed); got != canary {
		t.Fatalf("decrypting a stored record by the documented layout gave %q", got)
	}

	// A keyset's own root key is a Secret like any other: sealed under a
	// root the caller chose, it reads back in the clear.
	other := bytes.Repeat([]byte{0x17}, custody.RootKeySize)
	victimRoot := custody.NewSecret(bytes.Clone(other))
	if _, err := custody.NewKeyset(1, map[uint32]*custody.Secret{1: victimRoot}); err != nil {
		t.Fatal(err)
	}
	sealed, err = ks.Seal(b, victimRoot)
	if err != nil {
		t.Fatal(err)
	}
	if got := openByLayout(t, root, b, sealed); got != string(other) {
		t.Fatalf("a root key sealed under a chosen root read back as %x", got)
	}
}

// openByLayout decrypts a sealed record with nothing but docs/custody.md:
// format byte, big-endian key version, 24-byte nonce, then ciphertext and
// tag; XChaCha20-Poly1305 under HKDF-SHA256(root, info = label ||
// LP(namespace)) with the length-prefixed associated data.
func openByLayout(t *testing.T, root []byte, b custody.Binding, sealed []byte) string {
	t.Helper()
	lp := func(dst []byte, s string) []byte {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
		return append(dst, s...)
	}
	info := lp([]byte("checkfu custody namespace subkey v1"), b.Namespace)
	key, err := hkdf.Key(sha256.New, root, nil, string(info), chacha20poly1305.KeySize)
	if err != nil {
		t.Fatal(err)
	}
	a, err := chacha20poly1305.NewX(key)
	if err != nil {
		t.Fatal(err)
	}
	v := sealed[1:5]
	ad := lp(nil, "checkfu.custody.record.v1")
	ad = lp(ad, b.Namespace)
	ad = lp(ad, b.Integration)
	ad = lp(ad, b.Handle.String())
	ad = lp(ad, string(v))
	plain, err := a.Open(nil, sealed[5:29], sealed[29:], ad)
	if err != nil {
		t.Fatalf("open by layout: %v", err)
	}
	return string(plain)
}
