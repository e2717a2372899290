package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"io"

	"github.com/checkfu/checkfu"
)

// A Signer signs DSSE envelopes (conformance receipts, admission records)
// with one Ed25519 private key. The
// private key lives only inside a closure, so no formatting, logging or
// reflection of a Signer can print it.
//
// The zero Signer refuses to sign.
type Signer struct {
	id     KeyID
	pubPEM []byte
	sign   func(msg []byte) []byte
}

func newSigner(priv ed25519.PrivateKey) *Signer {
	pubPEM, id := publicKeyPEM(priv.Public().(ed25519.PublicKey))
	return &Signer{id: id, pubPEM: pubPEM, sign: func(msg []byte) []byte { return ed25519.Sign(priv, msg) }}
}

// GenerateSigner makes a new signing key from rand (crypto/rand.Reader
// when nil) and returns its signer and its PKCS#8 PEM private key, which
// the caller must store where only the key's holder can read it.
func GenerateSigner(rand io.Reader) (*Signer, []byte, error) {
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	return newSigner(priv), pem.EncodeToMemory(&pem.Block{Type: privateKeyBlock, Bytes: der}), nil
}

// ParsePrivateKeyPEM returns the signer of a PKCS#8 PEM Ed25519 private
// key, such as `openssl genpkey -algorithm ed25519` writes. The PEM and the
// DER must re-encode to the same bytes; anything else is refused with
// [CodeKeyInvalid]. Errors never quote the key.
func ParsePrivateKeyPEM(data []byte) (*Signer, error) {
	der, err := decodePEM(data, privateKeyBlock, "private key")
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: private key is not PKCS#8 DER")
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: private key is %T, want Ed25519", key)
	}
	again, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil || !bytes.Equal(again, der) {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: private key DER does not re-encode to the same bytes")
	}
	return newSigner(priv), nil
}

// KeyID returns the key id of s's public key.
func (s *Signer) KeyID() KeyID { return s.id }

// PublicKeyPEM returns s's public key in PKIX PEM form, the text an
// operator puts in an [AttesterSet] file.
func (s *Signer) PublicKeyPEM() []byte { return bytes.Clone(s.pubPEM) }

// signPayload signs arbitrary payload bytes under payloadType, with no
// check of either; tests use it to make validly signed envelopes around
// malformed payloads.
func signPayload(s *Signer, payloadType string, payload []byte) []byte {
	return marshalEnvelope(payloadType, payload, s.id, s.sign(pae(payloadType, payload)))
}
