package signing

import (
	"strings"

	"github.com/checkfu/checkfu"
)

// SignPayload returns the DSSE envelope JSON of payload signed by s under
// payloadType: the signature covers PAE(payloadType, payload). Each kind
// of signed statement has its own payloadType, its signing domain, which
// must start with "checkfu." and be at most [MaxPayloadTypeSize] bytes
// ([CodePayloadTypeInvalid]); the zero Signer is refused with
// [CodeKeyInvalid]. SignPayload does not look inside payload: a statement
// type's own Sign function (such as conformance.Sign) checks it first.
func (s *Signer) SignPayload(payloadType string, payload []byte) ([]byte, error) {
	if s == nil || s.sign == nil {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: the zero Signer has no key; use ParsePrivateKeyPEM or GenerateSigner")
	}
	if err := checkPayloadType(payloadType); err != nil {
		return nil, err
	}
	return signPayload(s, payloadType, payload), nil
}

// VerifyPayload checks a DSSE envelope signed under payloadType by a key
// of s and returns the signer and the payload bytes. It refuses, in this
// order:
//
//   - a payloadType outside the checkfu. namespace
//     ([CodePayloadTypeInvalid]);
//   - an envelope larger than [MaxEnvelopeSize], or that is not strict
//     DSSE JSON with exactly one signature ([CodeEnvelopeMalformed]);
//   - an envelope of another payloadType ([CodePayloadTypeMismatch]);
//   - a key id naming no attester of s ([CodeAttesterUnknown]);
//   - a signature that is not strictly valid over PAE(payloadType,
//     payload) ([CodeSignatureInvalid]).
//
// Parsing the payload, and checking that it is canonical, is the
// caller's: it must happen only after VerifyPayload returns nil. It does
// no I/O and no per-key work: keys were admitted when s was parsed.
func (s *AttesterSet) VerifyPayload(envelope []byte, payloadType string) (Attester, []byte, error) {
	if err := checkPayloadType(payloadType); err != nil {
		return Attester{}, nil, err
	}
	env, err := parseEnvelope(envelope)
	if err != nil {
		return Attester{}, nil, err
	}
	if env.payloadType != payloadType {
		return Attester{}, nil, checkfu.Refuse(CodePayloadTypeMismatch, "signing: payloadType %s, want %q", checkfu.Quote(env.payloadType), payloadType)
	}
	a, ok := s.lookup(env.keyID)
	if !ok {
		return Attester{}, nil, checkfu.Refuse(CodeAttesterUnknown, "signing: key %s is not in the attester set (%d attesters)", env.keyID, s.Len())
	}
	if !a.key.Verify(pae(env.payloadType, env.payload), env.sig) {
		return Attester{}, nil, checkfu.Refuse(CodeSignatureInvalid, "signing: signature by attester %q does not verify", a.name)
	}
	return a.public(), env.payload, nil
}

// MaxPayloadTypeSize is the longest payloadType SignPayload and
// VerifyPayload accept, in bytes.
const MaxPayloadTypeSize = 128

// checkPayloadType refuses a payloadType outside the checkfu. namespace.
func checkPayloadType(t string) error {
	if !strings.HasPrefix(t, "checkfu.") || len(t) > MaxPayloadTypeSize {
		return checkfu.Refuse(CodePayloadTypeInvalid, "signing: payload type %s is not a checkfu. statement type of at most %d bytes", checkfu.Quote(t), MaxPayloadTypeSize)
	}
	return nil
}
