package signing

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants break the checks of this package. The receipt path's tests in
// conformance, the checkpoint verifier's in eventlog and the wire's in
// acp/wire kill mutants of the same checks again, from their own tables,
// so each caller is shown to go through them.
var mutants = []mutation.Mutant{
	{Name: "small-order key", File: "strict.go",
		Edits: []mutation.Edit{{Old: "if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {", New: "if false {"}},
		Kills: "TestSpeccheckStrictVerify|TestSmallOrderKeyRefused"},
	{Name: "non-canonical key", File: "strict.go",
		Edits: []mutation.Edit{{Old: "if !bytes.Equal(p.Bytes(), a) {", New: "if false {"}},
		Kills: "TestSpeccheckStrictVerify|TestParseAttesterSetRefusals"},
	{Name: "small-order R", File: "strict.go",
		Edits: []mutation.Edit{{Old: "if len(sig) != ed25519.SignatureSize || smallOrderR(sig[:32]) {", New: "if len(sig) != ed25519.SignatureSize {"}},
		Kills: "TestSpeccheckStrictVerify|TestStrictRefusesSmallOrderR"},
	{Name: "prime-order subgroup", File: "strict.go",
		Edits: []mutation.Edit{{Old: "if la.Add(la, p).Equal(edwards25519.NewIdentityPoint()) != 1 {", New: "if false && la.Add(la, p).Equal(edwards25519.NewIdentityPoint()) != 1 {"}},
		Kills: "TestAdmissionRefusesMixedOrderKey"},
	{Name: "small-order list: identity", File: "strict.go",
		Edits: []mutation.Edit{{Old: "\thex32(\"0100000000000000000000000000000000000000000000000000000000000000\"), // identity\n", New: ""}},
		Kills: "TestSmallOrderEncodings"},
	{Name: "small-order list: order 8", File: "strict.go",
		Edits: []mutation.Edit{{Old: "\thex32(\"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05\"),\n", New: ""}},
		Kills: "TestSmallOrderEncodings"},
	{Name: "attester duplicate name", File: "attesters.go",
		Edits: []mutation.Edit{{Old: "if names[aj.Name] {", New: "if false {"}}, Kills: "TestParseAttesterSetRefusals"},
	{Name: "attester duplicate key", File: "attesters.go",
		Edits: []mutation.Edit{{Old: "if prev, dup := s.byID[id]; dup {", New: "if prev, dup := s.byID[id]; false && dup {"}}, Kills: "TestParseAttesterSetRefusals"},
	{Name: "PEM re-encoding", File: "key.go",
		Edits: []mutation.Edit{{Old: "if !bytes.Equal(bytes.TrimSpace(data), bytes.TrimSpace(pem.EncodeToMemory(block))) {", New: "if false {"}}, Kills: "TestParseAttesterSetRefusals"},
	{Name: "DER re-encoding", File: "key.go",
		Edits: []mutation.Edit{{Old: "if err != nil || !bytes.Equal(again, der) {", New: "if err != nil || false && !bytes.Equal(again, der) {"}}, Kills: "TestParseAttesterSetRefusals"},
	{Name: "KeyIDOf admits the point", File: "key.go",
		Edits: []mutation.Edit{{Old: "if _, err := admitKey(pub); err != nil {", New: "if _, err := admitKey(pub); false && err != nil {"}}, Kills: "TestKeyIDOfAdmits"},
	{Name: "VerifyPayload: payload type", File: "payload.go",
		Edits: []mutation.Edit{{Old: "if env.payloadType != payloadType {", New: "if false {"}},
		Kills: "TestSignVerifyPayload"},
	{Name: "VerifyPayload: strict signature", File: "payload.go",
		Edits: []mutation.Edit{{Old: "if !a.key.Verify(pae(env.payloadType, env.payload), env.sig) {", New: "if false {"}},
		Kills: "TestSignVerifyPayload"},
	{Name: "VerifyPayload: key in the set", File: "payload.go",
		Edits: []mutation.Edit{{Old: "a, ok := s.lookup(env.keyID)\n\tif !ok {", New: "a, ok := s.lookup(env.keyID)\n\tif false && !ok {"}},
		Kills: "TestSignVerifyPayload"},
	{Name: "SignPayload: checkfu. namespace", File: "payload.go",
		Edits: []mutation.Edit{{Old: "if !strings.HasPrefix(t, \"checkfu.\") || len(t) > MaxPayloadTypeSize {", New: "if strings.HasPrefix(t, \"\") && len(t) > MaxPayloadTypeSize {"}},
		Kills: "TestSignVerifyPayload"},
	{Name: "SignPayload: payload type size", File: "payload.go",
		Edits: []mutation.Edit{{Old: "if !strings.HasPrefix(t, \"checkfu.\") || len(t) > MaxPayloadTypeSize {", New: "if !strings.HasPrefix(t, \"checkfu.\") {"}},
		Kills: "TestSignVerifyPayload"},
	{Name: "payloadType quoted whole in a refusal", File: "payload.go",
		Edits: []mutation.Edit{{Old: "checkfu.Quote(env.payloadType)", New: "\"\\\"\" + env.payloadType + \"\\\"\""}},
		Kills: "TestRefusalTextIsBounded"},
	{Name: "envelope keyid quoted whole in a refusal", File: "envelope.go",
		Edits: []mutation.Edit{{Old: "checkfu.Quote(ej.Signatures[0].KeyID)", New: "ej.Signatures[0].KeyID"}},
		Kills: "TestRefusalTextIsBounded"},
	{Name: "unknown top-level key quoted whole", File: "envelope_scan.go",
		Edits: []mutation.Edit{{Old: "at top level (keys are case-sensitive)\", checkfu.Quote(key))", New: "at top level (keys are case-sensitive)\", key)"}},
		Kills: "TestRefusalTextIsBounded"},
	{Name: "unknown signature key quoted whole", File: "envelope_scan.go",
		Edits: []mutation.Edit{{Old: "checkfu.Quote(key), path)", New: "key, path)"}},
		Kills: "TestRefusalTextIsBounded"},
	{Name: "key id quoted whole in a refusal", File: "key.go",
		Edits: []mutation.Edit{{Old: "is not 64 lowercase hex digits\", checkfu.Quote(s))", New: "is not 64 lowercase hex digits\", s)"}},
		Kills: "TestParseRefusalTextIsBounded"},
	{Name: "attester name quoted whole in a refusal", File: "attesters.go",
		Edits: []mutation.Edit{{Old: "must be 1 to 255 bytes of UTF-8\", checkfu.Quote(name))", New: "must be 1 to 255 bytes of UTF-8\", name)"}},
		Kills: "TestParseRefusalTextIsBounded"},
}
