package conformance

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants break the receipt checks. Key admission, strict verification
// and the envelope are package signing's (its own table breaks each of
// them against its tests); the mutants below that edit ../signing show
// that the receipt path goes through them.
var mutants = []mutation.Mutant{
	{Name: "small-order R in the receipt path", File: "../signing/strict.go",
		Edits: []mutation.Edit{{Old: "if len(sig) != ed25519.SignatureSize || smallOrderR(sig[:32]) {", New: "if len(sig) != ed25519.SignatureSize {"}},
		Kills: "TestCertifyRefusals"},
	{Name: "signature check in Verify", File: "../signing/payload.go",
		Edits: []mutation.Edit{{Old: "if !a.key.Verify(pae(env.payloadType, env.payload), env.sig) {", New: "if false {"}},
		Kills: "TestBitFlipSweep"},
	{Name: "payload type comparison", File: "../signing/payload.go",
		Edits: []mutation.Edit{{Old: "if env.payloadType != payloadType {", New: "if false {"}}, Kills: "TestCertifyRefusals"},
	{Name: "receipt payload type", File: "verify.go",
		Edits: []mutation.Edit{{Old: "a, payload, err := attesters.VerifyPayload(envelope, PayloadType)", New: "a, payload, err := attesters.VerifyPayload(envelope, \"checkfu.sandbox-egress-conformance.v2\")"}},
		Kills: "TestCertifyRefusals"},
	{Name: "attester lookup", File: "../signing/payload.go",
		Edits: []mutation.Edit{{Old: "a, ok := s.lookup(env.keyID)\n\tif !ok {", New: "a, ok := s.lookup(env.keyID)\n\tif false && !ok {"}}, Kills: "TestCertifyRefusals"},
	{Name: "key id comparison", File: "verify.go",
		Edits: []mutation.Edit{{Old: "if rec.Attester != a.KeyID {", New: "if false {"}}, Kills: "TestCertifyRefusals"},
	{Name: "provider comparison", File: "verify.go",
		Edits: []mutation.Edit{{Old: "if got.Provider != target.Provider {", New: "if false {"}}, Kills: "TestCertifyRefusals"},
	{Name: "revision comparison", File: "verify.go",
		Edits: []mutation.Edit{{Old: "if got.Revision != target.Revision {", New: "if false {"}}, Kills: "TestCertifyRefusals"},
	{Name: "five facts", File: "verify.go",
		Edits: []mutation.Edit{{Old: "if !r.record.Facts.Complete() {", New: "if false {"}}, Kills: "TestCertifyRefusals"},
	{Name: "production label", File: "verify.go",
		Edits: []mutation.Edit{{Old: "if r.record.Label != checkfu.LabelProduction {", New: "if false {"}}, Kills: "TestCertifyRefusals"},
	{Name: "envelope size", File: "../signing/envelope.go",
		Edits: []mutation.Edit{{Old: "if len(data) > MaxEnvelopeSize {", New: "if false {"}}, Kills: "TestCertifyRefusals"},
	{Name: "one signature", File: "../signing/envelope.go",
		Edits: []mutation.Edit{{Old: "if len(ej.Signatures) != 1 {", New: "if len(ej.Signatures) < 1 {"}}, Kills: "TestCertifyRefusals"},
	{Name: "base64 re-encoding", File: "../signing/envelope.go",
		Edits: []mutation.Edit{{Old: "if base64.StdEncoding.EncodeToString(b) != s {", New: "if false {"}}, Kills: "TestCertifyRefusals"},
	{Name: "scanner duplicate key", File: "../signing/envelope_scan.go",
		Edits: []mutation.Edit{{Old: "if *seen {", New: "if false {"}}, Kills: "TestCertifyRefusals"},
	{Name: "scanner trailing data", File: "../signing/envelope_scan.go",
		Edits: []mutation.Edit{{Old: "if s.i != len(s.b) {", New: "if false {"}}, Kills: "TestCertifyRefusals"},
	{Name: "Sign checks the record's key", File: "verify.go",
		Edits: []mutation.Edit{{Old: "if r.Attester != s.KeyID() {", New: "if false {"}}, Kills: "TestSignRefusesInvalidRecord"},
	{Name: "nil Receipt's Attester", File: "verify.go",
		Edits: []mutation.Edit{{Old: "if r == nil {\n\t\treturn signing.Attester{}\n\t}\n", New: ""}},
		Kills: "TestNilReceiptAccessors"},
	{Name: "nil Receipt's Record", File: "verify.go",
		Edits: []mutation.Edit{{Old: "if r == nil {\n\t\treturn Record{}\n\t}\n", New: ""}},
		Kills: "TestNilReceiptAccessors"},
	{Name: "record string quoted whole in a refusal", File: "internal/wire/wire.go",
		Edits: []mutation.Edit{{Old: "field, checkfu.Quote(s), len(s), MaxString)", New: "field, s, len(s), MaxString)"}},
		Kills: "TestStatementRefusalTextIsBounded"},
	{Name: "fact name quoted whole in a refusal", File: "fact.go",
		Edits: []mutation.Edit{{Old: "checkfu.Quote(s), factNames())", New: "s, factNames())"}},
		Kills: "TestStatementRefusalTextIsBounded"},
	{Name: "evidence digest quoted whole in a refusal", File: "record.go",
		Edits: []mutation.Edit{{Old: "lowercase hex digits\", checkfu.Quote(s))", New: "lowercase hex digits\", s)"}},
		Kills: "TestStatementRefusalTextIsBounded"},
	{Name: "statement issued_at quoted whole in a refusal", File: "statement.go",
		Edits: []mutation.Edit{{Old: "checkfu.Quote(s.IssuedAt))", New: "s.IssuedAt)"}},
		Kills: "TestStatementRefusalTextIsBounded"},
	{Name: "statement attester_key_id quoted whole in a refusal", File: "statement.go",
		Edits: []mutation.Edit{{Old: "checkfu.Quote(s.AttesterKeyID))", New: "s.AttesterKeyID)"}},
		Kills: "TestStatementRefusalTextIsBounded"},
}
