package conformance

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"io"

	"github.com/checkfu/checkfu"
)

// A Signer signs receipts with one attester's Ed25519 private key. The
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

// GenerateSigner makes a new attester key from rand (crypto/rand.Reader
// when nil) and returns its signer and its PKCS#8 PEM private key, which
// the caller must store where only the attester can read it.
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
		return nil, checkfu.Refuse(CodeKeyInvalid, "conformance: private key is not PKCS#8 DER")
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, checkfu.Refuse(CodeKeyInvalid, "conformance: private key is %T, want Ed25519", key)
	}
	again, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil || !bytes.Equal(again, der) {
		return nil, checkfu.Refuse(CodeKeyInvalid, "conformance: private key DER does not re-encode to the same bytes")
	}
	return newSigner(priv), nil
}

// KeyID returns the key id of s's public key.
func (s *Signer) KeyID() KeyID { return s.id }

// PublicKeyPEM returns s's public key in PKIX PEM form, the text an
// operator puts in an attester set.
func (s *Signer) PublicKeyPEM() []byte { return bytes.Clone(s.pubPEM) }

// Sign returns the DSSE envelope JSON of r signed by s. It fills in
// r.Attester with s's key id, refuses a record naming another key, and
// refuses a record failing [Record.Check] with [CodeRecordInvalid]. It
// signs records lacking facts or with non-production evidence: they verify
// but certify nothing.
func (s *Signer) Sign(r Record) ([]byte, error) {
	if s == nil || s.sign == nil {
		return nil, checkfu.Refuse(CodeKeyInvalid, "conformance: the zero Signer has no key; use ParsePrivateKeyPEM or GenerateSigner")
	}
	if r.Attester == (KeyID{}) {
		r.Attester = s.id
	}
	if r.Attester != s.id {
		return nil, checkfu.Refuse(CodeRecordInvalid, "conformance: record names attester key %s, but the signing key is %s", r.Attester, s.id)
	}
	payload, err := r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return signPayload(s, PayloadType, payload), nil
}

// signPayload signs arbitrary payload bytes; tests use it to make
// validly signed envelopes around malformed payloads.
func signPayload(s *Signer, payloadType string, payload []byte) []byte {
	return marshalEnvelope(payloadType, payload, s.id, s.sign(pae(payloadType, payload)))
}
