package conformance_test

import (
	"encoding/hex"
	"testing"

	"github.com/checkfu/checkfu/conformance"

	"github.com/checkfu/checkfu/signing"
)

// The worked example of docs/receipts.md: the example key signing the
// example statement. Ed25519 is deterministic, so the bytes are fixed; if
// this test fails, the wire format changed and the document must too.
const (
	vectorPayloadHex = "0118636865636b66753a646179746f6e612d70726f766964657201321f029ffd5db67699bdb0bc2ec36a1e2d1bfbb03bcf3db499cfcf9ca52ae0ee244fb4000000006b0d1ef000206f2a0e2a5d2c4b8f1e0e9d7c6b5a49382716f5e4d3c2b1a09f8e7d6c5b4a3928"
	vectorEnvelope   = `{
  "payloadType": "checkfu.sandbox-egress-conformance.v1",
  "payload": "ARhjaGVja2Z1OmRheXRvbmEtcHJvdmlkZXIBMh8Cn/1dtnaZvbC8LsNqHi0b+7A7zz20mc/PnKUq4O4kT7QAAAAAaw0e8AAgbyoOKl0sS48eDp18a1pJOCcW9eTTwrGgn459bFtKOSg=",
  "signatures": [
    {
      "keyid": "9ffd5db67699bdb0bc2ec36a1e2d1bfbb03bcf3db499cfcf9ca52ae0ee244fb4",
      "sig": "NLS8wVySiAv+Pl9QDve1MIdlBGE3oTyrcAt2CQVxXE4J4iTHxX1d2nHrC4A/WWC3mbGcDJkt9VxlZ+npKgfGCA=="
    }
  ]
}
`
)

func TestReceiptVector(t *testing.T) {
	signer, env := exampleReceipt()
	if string(env) != vectorEnvelope {
		t.Fatalf("envelope =\n%s\nwant\n%s", env, vectorEnvelope)
	}
	rec, err := conformance.ParseStatement([]byte(exampleStatement))
	if err != nil {
		t.Fatal(err)
	}
	rec.Attester = signer.KeyID()
	p, err := rec.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(p); got != vectorPayloadHex {
		t.Fatalf("payload = %s, want %s", got, vectorPayloadHex)
	}
	set, _ := signing.ParseAttesterSet(exampleSetFile(signer))
	if _, err := conformance.Certify(set, []byte(vectorEnvelope), daytona2); err != nil {
		t.Fatalf("vector does not certify: %v", err)
	}
}
