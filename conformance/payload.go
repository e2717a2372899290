package conformance

import (
	"strings"

	"github.com/checkfu/checkfu"
)

// SignPayload returns the DSSE envelope JSON of payload signed by s under
// payloadType, for another signed statement that reuses this package's
// discipline (its own payload type, the same PAE framing and strict
// verification). payloadType must start with "checkfu." and must not be
// [PayloadType]: a receipt is made only by [Signer.Sign]. Refusals have
// code [CodeRecordInvalid] (or [CodeKeyInvalid] for the zero Signer).
func (s *Signer) SignPayload(payloadType string, payload []byte) ([]byte, error) {
	if s == nil || s.sign == nil {
		return nil, checkfu.Refuse(CodeKeyInvalid, "conformance: the zero Signer has no key; use ParsePrivateKeyPEM or GenerateSigner")
	}
	if err := checkOtherPayloadType(payloadType); err != nil {
		return nil, err
	}
	return signPayload(s, payloadType, payload), nil
}

// VerifyPayload checks a DSSE envelope signed under payloadType (not
// [PayloadType]) by a key of s, with the same strict rules and the same
// order as [AttesterSet.Verify] (envelope, payload type, key, strict
// signature), and returns the signer and the payload bytes. Parsing the
// payload, and checking that it is canonical, is the caller's: it must
// happen only after VerifyPayload returns nil.
func (s *AttesterSet) VerifyPayload(envelope []byte, payloadType string) (Attester, []byte, error) {
	if err := checkOtherPayloadType(payloadType); err != nil {
		return Attester{}, nil, err
	}
	env, err := parseEnvelope(envelope)
	if err != nil {
		return Attester{}, nil, err
	}
	if env.payloadType != payloadType {
		return Attester{}, nil, checkfu.Refuse(CodePayloadTypeMismatch, "conformance: payloadType %q, want %q", env.payloadType, payloadType)
	}
	a, ok := s.lookup(env.keyID)
	if !ok {
		return Attester{}, nil, checkfu.Refuse(CodeAttesterUnknown, "conformance: key %s is not in the set (%d keys)", env.keyID, s.Len())
	}
	if !a.key.verify(pae(env.payloadType, env.payload), env.sig) {
		return Attester{}, nil, checkfu.Refuse(CodeSignatureInvalid, "conformance: signature by %q does not verify", a.name)
	}
	return a.public(), env.payload, nil
}

func checkOtherPayloadType(t string) error {
	if t == PayloadType || !strings.HasPrefix(t, "checkfu.") || len(t) > 128 {
		return checkfu.Refuse(CodeRecordInvalid, "conformance: payload type %q is not a checkfu statement type other than %q", t, PayloadType)
	}
	return nil
}
