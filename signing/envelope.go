package signing

import (
	"encoding/base64"
	"encoding/json"
	"strconv"

	"github.com/checkfu/checkfu"
)

// MaxEnvelopeSize is the largest envelope [AttesterSet.VerifyPayload]
// reads, in bytes. The largest valid conformance record encodes to under
// 66 KiB.
const MaxEnvelopeSize = 256 << 10

// pae returns DSSE's pre-authentication encoding:
// "DSSEv1" SP len(type) SP type SP len(body) SP body, lengths in ASCII
// decimal without leading zeros.
func pae(payloadType string, payload []byte) []byte {
	b := make([]byte, 0, 32+len(payloadType)+len(payload))
	b = append(b, "DSSEv1 "...)
	b = strconv.AppendInt(b, int64(len(payloadType)), 10)
	b = append(b, ' ')
	b = append(b, payloadType...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(payload)), 10)
	b = append(b, ' ')
	return append(b, payload...)
}

type envelopeJSON struct {
	PayloadType string          `json:"payloadType"`
	Payload     string          `json:"payload"`
	Signatures  []signatureJSON `json:"signatures"`
}

type signatureJSON struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

// An envelope is a parsed DSSE envelope holding exactly one signature.
type envelope struct {
	payloadType string
	payload     []byte
	keyID       KeyID
	sig         []byte
}

func malformed(format string, args ...any) error {
	return checkfu.Refuse(CodeEnvelopeMalformed, format, args...)
}

// parseEnvelope decodes the envelope JSON strictly. It does not look
// inside the payload.
func parseEnvelope(data []byte) (*envelope, error) {
	if len(data) > MaxEnvelopeSize {
		return nil, malformed("signing: envelope is %d bytes, more than the %d allowed", len(data), MaxEnvelopeSize)
	}
	ej, err := scanEnvelopeJSON(data)
	if err != nil {
		return nil, malformed("signing: not a DSSE envelope: %v", err)
	}
	if len(ej.Signatures) != 1 {
		return nil, malformed("signing: envelope has %d signatures, want exactly 1", len(ej.Signatures))
	}
	payload, err := strictBase64(ej.Payload)
	if err != nil {
		return nil, malformed("signing: envelope payload is not standard padded base64")
	}
	sig, err := strictBase64(ej.Signatures[0].Sig)
	if err != nil {
		return nil, malformed("signing: envelope signature is not standard padded base64")
	}
	id, err := ParseKeyID(ej.Signatures[0].KeyID)
	if err != nil {
		return nil, malformed("signing: envelope keyid %s is not 64 lowercase hex digits", checkfu.Quote(ej.Signatures[0].KeyID))
	}
	return &envelope{payloadType: ej.PayloadType, payload: payload, keyID: id, sig: sig}, nil
}

// strictBase64 decodes standard padded base64 and refuses any text that
// is not exactly the encoding of its bytes (line breaks, non-zero padding
// bits).
func strictBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, err
	}
	if base64.StdEncoding.EncodeToString(b) != s {
		return nil, base64.CorruptInputError(0)
	}
	return b, nil
}

// marshalEnvelope returns the envelope JSON of one signed payload.
func marshalEnvelope(payloadType string, payload []byte, id KeyID, sig []byte) []byte {
	out, err := json.MarshalIndent(envelopeJSON{
		PayloadType: payloadType,
		Payload:     base64.StdEncoding.EncodeToString(payload),
		Signatures:  []signatureJSON{{KeyID: id.String(), Sig: base64.StdEncoding.EncodeToString(sig)}},
	}, "", "  ")
	if err != nil {
		panic("signing: marshalling an envelope: " + err.Error()) // only strings inside
	}
	return append(out, '\n')
}
