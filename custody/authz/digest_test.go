package authz_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/custody/authz"
)

// digestReference is Action.Digest as it was written first, a hash.Hash
// fed each length-prefixed field: the digest approvals bind must not
// change with its implementation.
func digestReference(a authz.Action) string {
	h := sha256.New()
	for _, f := range [][]byte{[]byte("checkfu/custody/action/v1"), []byte(a.Capability), []byte(a.Operation), []byte(a.Resource), {byte(a.Effect)}, a.Body} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write(f)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// TestDigestIsTheReference: on any action, Digest is the first
// implementation's digest, and a fixed action keeps its fixed digest.
func TestDigestIsTheReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := authz.Action{
			Capability: rapid.String().Draw(t, "capability"),
			Operation:  rapid.String().Draw(t, "operation"),
			Resource:   rapid.String().Draw(t, "resource"),
			Effect:     authz.Effect(rapid.Uint8().Draw(t, "effect")),
			Body:       rapid.SliceOfN(rapid.Byte(), 0, 1024).Draw(t, "body"), // both sides of Digest's stack buffer
		}
		if got, want := a.Digest(), digestReference(a); got != want {
			t.Fatalf("Digest() = %s, the reference gives %s", got, want)
		}
	})
	a := authz.Action{Capability: "github.issues.create", Operation: "POST", Resource: "https://api.github.example/repos/acme/app/issues", Effect: authz.ExternalEffect, Body: []byte(`{"title":"hello"}`)}
	if got, want := a.Digest(), digestReference(a); got != want {
		t.Fatalf("Digest() = %s, want %s", got, want)
	}
}

func BenchmarkDigest(b *testing.B) {
	a := authz.Action{Capability: "github.issues.list", Operation: "GET", Resource: "https://api.github.example/repos/acme/app/issues", Effect: authz.ReadOnly, Body: []byte(`{"state":"open"}`)}
	b.Run("Digest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = a.Digest()
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = digestReference(a)
		}
	})
}
