package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"

	"github.com/checkfu/checkfu"
)

// A KeyID names a public key: the SHA-256 of the key's DER-encoded
// PKIX SubjectPublicKeyInfo, the same bytes `openssl pkey -pubin -outform
// DER` prints. Its text form is 64 lowercase hex digits.
type KeyID [32]byte

// String returns the lowercase hex form of id.
func (id KeyID) String() string { return hex.EncodeToString(id[:]) }

// ParseKeyID parses exactly 64 lowercase hex digits; anything else is
// refused with [CodeKeyInvalid].
func ParseKeyID(s string) (KeyID, error) {
	var id KeyID
	if err := parseHex32(s, id[:]); err != nil {
		return KeyID{}, checkfu.Refuse(CodeKeyInvalid, "signing: key id %s is not 64 lowercase hex digits", checkfu.Quote(s))
	}
	return id, nil
}

// MarshalText implements encoding.TextMarshaler with the hex form.
func (id KeyID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with [ParseKeyID].
func (id *KeyID) UnmarshalText(text []byte) error {
	v, err := ParseKeyID(string(text))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// parseHex32 decodes exactly 64 lowercase hex digits into out.
func parseHex32(s string, out []byte) error {
	if len(s) != 64 {
		return hex.ErrLength
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return hex.InvalidByteError(c)
		}
	}
	_, err := hex.Decode(out, []byte(s))
	return err
}

// PEM block types of the two key formats this package reads and writes.
const (
	publicKeyBlock  = "PUBLIC KEY"  // PKIX SubjectPublicKeyInfo
	privateKeyBlock = "PRIVATE KEY" // PKCS#8
)

// decodePEM returns the DER body of the single PEM block of the given type
// in data. Nothing but whitespace may surround the block, it may carry no
// headers, and data must be exactly what encoding/pem would write for it
// (which is also what openssl writes), so one key has one text form.
func decodePEM(data []byte, blockType, what string) ([]byte, error) {
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: %s is not PEM (want a %q block)", what, blockType)
	}
	if block.Type != blockType {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: %s is a %q PEM block, want %q", what, block.Type, blockType)
	}
	if len(block.Headers) != 0 {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: %s PEM block has headers; want a plain %q block", what, blockType)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: %s has data after its PEM block; want exactly one key", what)
	}
	if !bytes.Equal(bytes.TrimSpace(data), bytes.TrimSpace(pem.EncodeToMemory(block))) {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: %s PEM does not re-encode to the same bytes (64-column base64, LF line ends)", what)
	}
	return block.Bytes, nil
}

// parsePublicKeyPEM decodes a PKIX PEM Ed25519 public key and refuses it
// unless the DER re-encodes to the same bytes. It returns the raw key and
// its key id; the point checks are admitKey's.
func parsePublicKeyPEM(data []byte) (ed25519.PublicKey, KeyID, error) {
	der, err := decodePEM(data, publicKeyBlock, "public key")
	if err != nil {
		return nil, KeyID{}, err
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, KeyID{}, checkfu.Refuse(CodeKeyInvalid, "signing: public key is not PKIX DER: %v", err)
	}
	edPub, ok := pub.(ed25519.PublicKey)
	if !ok {
		return nil, KeyID{}, checkfu.Refuse(CodeKeyInvalid, "signing: public key is %T, want Ed25519", pub)
	}
	again, err := x509.MarshalPKIXPublicKey(edPub)
	if err != nil || !bytes.Equal(again, der) {
		return nil, KeyID{}, checkfu.Refuse(CodeKeyInvalid, "signing: public key DER does not re-encode to the same bytes")
	}
	return edPub, sha256.Sum256(der), nil
}

// publicKeyPEM returns the PKIX PEM form of pub and its key id.
func publicKeyPEM(pub ed25519.PublicKey) ([]byte, KeyID) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		panic("signing: marshalling an Ed25519 public key: " + err.Error()) // cannot happen for a 32-byte key
	}
	return pem.EncodeToMemory(&pem.Block{Type: publicKeyBlock, Bytes: der}), sha256.Sum256(der)
}

// KeyIDOf returns the key id of a PKIX PEM public key after refusing any
// key [ParseAttesterSet] would refuse: a PEM or DER form that does not
// re-encode to the same bytes ([CodeKeyInvalid]), and every key
// [ParsePublicKey] refuses.
func KeyIDOf(publicKeyPEM []byte) (KeyID, error) {
	pub, id, err := parsePublicKeyPEM(publicKeyPEM)
	if err != nil {
		return KeyID{}, err
	}
	if _, err := admitKey(pub); err != nil {
		return KeyID{}, err
	}
	return id, nil
}
