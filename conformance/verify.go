package conformance

import (
	"slices"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/signing"
)

// CodeReceiptMissing is the code [Receipt.Certifies] returns for a nil or
// unverified Receipt.
const CodeReceiptMissing checkfu.Code = "receipt_missing"

// PayloadType is the DSSE payloadType of a conformance receipt and its
// signing domain: the signature covers PAE(PayloadType, payload).
const PayloadType = "checkfu.sandbox-egress-conformance.v1"

// BuiltinAttesters returns the built-in attester set, which is empty: no
// attester key is reviewed, so every receipt is refused with
// [signing.CodeAttesterUnknown] and no provider revision reaches
// security_boundary.
func BuiltinAttesters() *signing.AttesterSet { return &signing.AttesterSet{} }

// A Receipt is a verified statement: the attester it names signed exactly
// this record. That proves authorship and integrity, not truth, and on its
// own it certifies nothing; [Receipt.Certifies] says whether it certifies
// a given provider revision.
//
// Only [Verify] makes a Receipt; the zero Receipt certifies nothing.
type Receipt struct {
	attester signing.Attester
	record   Record
	verified bool
}

// Attester returns who signed the receipt; for a nil Receipt (what
// [Verify] returns with a refusal), the zero Attester.
func (r *Receipt) Attester() signing.Attester {
	if r == nil {
		return signing.Attester{}
	}
	a := r.attester
	a.PublicKey = slices.Clone(a.PublicKey)
	return a
}

// Record returns what the attester signed; for a nil Receipt, the zero
// Record.
func (r *Receipt) Record() Record {
	if r == nil {
		return Record{}
	}
	rec := r.record
	rec.Evidence = slices.Clone(rec.Evidence)
	return rec
}

// Sign returns the DSSE envelope JSON of r signed by s under
// [PayloadType]. It fills in r.Attester with s's key id, refuses a record
// naming another key, and refuses a record failing [Record.Check] with
// [CodeRecordInvalid]; the zero Signer is refused with
// [signing.CodeKeyInvalid]. It signs records lacking facts or with
// non-production evidence: they verify but certify nothing.
func Sign(s *signing.Signer, r Record) ([]byte, error) {
	if s == nil {
		return s.SignPayload(PayloadType, nil) // the zero Signer's refusal
	}
	if r.Attester == (signing.KeyID{}) {
		r.Attester = s.KeyID()
	}
	if r.Attester != s.KeyID() {
		return nil, checkfu.Refuse(CodeRecordInvalid, "conformance: record names attester key %s, but the signing key is %s", r.Attester, s.KeyID())
	}
	payload, err := r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return s.SignPayload(PayloadType, payload)
}

// Verify checks a DSSE receipt envelope against the attester set and
// returns who signed which record. It refuses, in this order:
//
//   - everything [signing.AttesterSet.VerifyPayload] refuses for
//     [PayloadType]: an envelope that is not strict DSSE JSON with exactly
//     one signature ([signing.CodeEnvelopeMalformed]), another payloadType
//     ([signing.CodePayloadTypeMismatch]), a key id naming no attester of
//     the set ([signing.CodeAttesterUnknown]), a signature that is not
//     strictly valid over PAE(payloadType, payload)
//     ([signing.CodeSignatureInvalid]);
//   - a payload that is not a canonical record ([CodePayloadNoncanonical]);
//   - a record naming another key than the one that signed it
//     ([CodeKeyIDMismatch]).
//
// The payload is parsed only after its signature verifies. Verify does no
// I/O and no per-key work: keys were admitted when the set was loaded.
func Verify(attesters *signing.AttesterSet, envelope []byte) (*Receipt, error) {
	a, payload, err := attesters.VerifyPayload(envelope, PayloadType)
	if err != nil {
		return nil, err
	}
	rec, err := ParseRecord(payload)
	if err != nil {
		return nil, err
	}
	if rec.Attester != a.KeyID {
		return nil, checkfu.Refuse(CodeKeyIDMismatch, "conformance: attester %q signed a record naming key %s", a.Name, rec.Attester)
	}
	return &Receipt{attester: a, record: rec, verified: true}, nil
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

// Certify verifies envelope against the attester set and returns the
// receipt if it certifies target; otherwise it returns the refusal of
// [Verify] or [Receipt.Certifies].
func Certify(attesters *signing.AttesterSet, envelope []byte, target checkfu.ProviderRevision) (*Receipt, error) {
	r, err := Verify(attesters, envelope)
	if err != nil {
		return nil, err
	}
	if err := r.Certifies(target); err != nil {
		return nil, err
	}
	return r, nil
}
