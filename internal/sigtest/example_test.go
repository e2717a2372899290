package sigtest_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"

	"github.com/checkfu/checkfu/internal/sigtest"
)

// Priv derives the same key from the same seed byte on every run.
func ExamplePriv() {
	fmt.Println(bytes.Equal(sigtest.Priv(1), sigtest.Priv(1)), bytes.Equal(sigtest.Priv(1), sigtest.Priv(2)))
	// Output: true false
}

// AttesterSetJSON writes the attester set's JSON form.
func ExampleAttesterSetJSON() {
	fmt.Printf("%s\n", sigtest.AttesterSetJSON(sigtest.Entry{Name: "a0", PublicKeyPEM: "pem"}))
	// Output: {"attesters":[{"name":"a0","public_key_pem":"pem"}]}
}

// SignWithIdentityR makes a signature crypto/ed25519 accepts although its
// R is of small order.
func ExampleSignWithIdentityR() {
	priv := sigtest.Priv(1)
	msg := []byte("message")
	sig := sigtest.SignWithIdentityR(priv, msg)
	fmt.Println(ed25519.Verify(priv.Public().(ed25519.PublicKey), msg, sig), sig[0], sig[31])
	// Output: true 1 0
}
