package conformance

import (
	"slices"

	"github.com/checkfu/checkfu"
)

// CodeReceiptMissing is the code [Receipt.Certifies] returns for a nil or
// unverified Receipt.
const CodeReceiptMissing checkfu.Code = "receipt_missing"

// A Receipt is a verified statement: the attester it names signed exactly
// this record. That proves authorship and integrity, not truth, and on its
// own it certifies nothing; [Receipt.Certifies] says whether it certifies
// a given provider revision.
//
// Only [AttesterSet.Verify] makes a Receipt; the zero Receipt certifies
// nothing.
type Receipt struct {
	attester Attester
	record   Record
	verified bool
}

// Attester returns who signed the receipt.
func (r *Receipt) Attester() Attester {
	a := r.attester
	a.PublicKey = slices.Clone(a.PublicKey)
	return a
}

// Record returns what the attester signed.
func (r *Receipt) Record() Record {
	rec := r.record
	rec.Evidence = slices.Clone(rec.Evidence)
	return rec
}

// Verify checks a DSSE receipt envelope against s and returns who signed
// which record. It refuses, in this order:
//
//   - an envelope that is not strict DSSE JSON with exactly one signature
//     ([CodeEnvelopeMalformed]);
//   - a payloadType other than [PayloadType] ([CodePayloadTypeMismatch]);
//   - a key id naming no attester of s ([CodeAttesterUnknown]);
//   - a signature that is not strictly valid over PAE(payloadType,
//     payload) ([CodeSignatureInvalid]);
//   - a payload that is not a canonical record ([CodePayloadNoncanonical]);
//   - a record naming another key than the one that signed it
//     ([CodeKeyIDMismatch]).
//
// The payload is parsed only after its signature verifies. Verify does no
// I/O and no per-key work: keys were admitted when s was loaded.
func (s *AttesterSet) Verify(envelope []byte) (*Receipt, error) {
	env, err := parseEnvelope(envelope)
	if err != nil {
		return nil, err
	}
	if env.payloadType != PayloadType {
		return nil, checkfu.Refuse(CodePayloadTypeMismatch, "conformance: payloadType %q, want %q", env.payloadType, PayloadType)
	}
	a, ok := s.lookup(env.keyID)
	if !ok {
		return nil, checkfu.Refuse(CodeAttesterUnknown, "conformance: key %s is not in the reviewed attester set (%d attesters)", env.keyID, s.Len())
	}
	if !a.key.verify(pae(env.payloadType, env.payload), env.sig) {
		return nil, checkfu.Refuse(CodeSignatureInvalid, "conformance: signature by attester %q does not verify", a.name)
	}
	rec, err := ParseRecord(env.payload)
	if err != nil {
		return nil, err
	}
	if rec.Attester != a.id {
		return nil, checkfu.Refuse(CodeKeyIDMismatch, "conformance: attester %q signed a record naming key %s", a.name, rec.Attester)
	}
	return &Receipt{attester: a.public(), record: rec, verified: true}, nil
}

// Certifies returns nil exactly when r certifies target at
// security_boundary: r was verified, it is for this exact provider
// ([CodeProviderMismatch]) and revision ([CodeRevisionMismatch]), compared
// byte for byte, it carries all five facts ([CodeFactMissing]) and its
// evidence is labelled production ([CodeLabelNotProduction]). A nil or
// unverified r is refused with [CodeReceiptMissing].
func (r *Receipt) Certifies(target checkfu.ProviderRevision) error {
	if r == nil || !r.verified {
		return checkfu.Refuse(CodeReceiptMissing, "conformance: no verified receipt for %q", target.String())
	}
	got := r.record.Target
	if got.Provider != target.Provider {
		return checkfu.Refuse(CodeProviderMismatch, "conformance: receipt is for provider %q, not %q", got.Provider, target.Provider)
	}
	if got.Revision != target.Revision {
		return checkfu.Refuse(CodeRevisionMismatch, "conformance: receipt is for %q, not revision %q", got.String(), target.Revision)
	}
	if !r.record.Facts.Complete() {
		return checkfu.Refuse(CodeFactMissing, "conformance: receipt for %q lacks %s; a receipt missing any fact certifies nothing", got.String(), FactSet{AllFacts().bits &^ r.record.Facts.bits})
	}
	if r.record.Label != checkfu.LabelProduction {
		return checkfu.Refuse(CodeLabelNotProduction, "conformance: receipt for %q carries %s evidence; only production evidence certifies", got.String(), r.record.Label)
	}
	return nil
}

// Certify verifies envelope against s and returns the receipt if it
// certifies target; otherwise it returns the refusal of [AttesterSet.Verify]
// or [Receipt.Certifies].
func (s *AttesterSet) Certify(envelope []byte, target checkfu.ProviderRevision) (*Receipt, error) {
	r, err := s.Verify(envelope)
	if err != nil {
		return nil, err
	}
	if err := r.Certifies(target); err != nil {
		return nil, err
	}
	return r, nil
}
