// Command verifyreceipt signs a sandbox egress conformance receipt with a
// throwaway Ed25519 key, verifies it against an attester set holding that
// key, and shows the refusals a verifier gives for a tampered payload and
// for a key the set does not hold.
//
// A receipt is a DSSE envelope: strict Ed25519 over PAE(payloadType,
// payload), where the payload is a canonical binary record naming one
// exact provider revision and the facts a conformance matrix established.
// A signature proves who signed which record, not that the record is true;
// only a receipt with all five facts and production evidence, signed by a
// reviewed attester, certifies a provider revision at security_boundary.
//
// The key here is made on the spot and thrown away, so the record it signs
// is labelled mock: a throwaway key never signs production evidence, and
// this receipt verifies but certifies nothing.
//
//	go run ./examples/verifyreceipt
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/signing"
)

// target is the exact provider revision the receipt is about.
var target = checkfu.ProviderRevision{Provider: "example:provider-a", Revision: "1"}

// statement is the record in its JSON form, as `checkfu receipt sign`
// reads it. The evidence digest is of bytes this program makes up.
const statement = `{
  "provider": "example:provider-a",
  "provider_revision": "1",
  "facts": ["exact_destination_match", "redirect_recheck", "connect_time_public_address", "authority_separation", "default_deny"],
  "label": "mock",
  "evidence_digests": ["%s"],
  "issued_at": "2026-12-01T00:00:00Z"
}`

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(out io.Writer) error {
	// 1. The attester: a throwaway key, and the set file an operator would
	// ship with its public key in it.
	signer, _, err := signing.GenerateSigner(nil) // the private PEM is dropped: never reused
	if err != nil {
		return err
	}
	set, err := signing.ParseAttesterSet(setFile("example-throwaway", signer))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "attester set: %d attester, example-throwaway (TESTING ONLY, a throwaway key)\n", set.Len())

	// 2. Sign the record.
	rec, err := conformance.ParseStatement(fmt.Appendf(nil, statement, conformance.DigestOf([]byte("made-up matrix evidence"))))
	if err != nil {
		return err
	}
	envelope, err := conformance.Sign(signer, rec)
	if err != nil {
		return err
	}

	// 3. Verify it: who signed which record, and what that certifies.
	receipt, err := conformance.Verify(set, envelope)
	if err != nil {
		return fmt.Errorf("the genuine receipt did not verify: %w", err)
	}
	got := receipt.Record()
	fmt.Fprintf(out, "verified: %s signed %s for %s, label %s\n", receipt.Attester().Name, got.Facts, got.Target, got.Label)
	fmt.Fprintf(out, "certifies %s: %s\n", target, outcome(receipt.Certifies(target)))
	fmt.Fprintf(out, "effective grade of %s advertising security_boundary: %s\n", target,
		conformance.EffectiveGrade(target, checkfu.SecurityBoundary, receipt))

	// 4. Tamper with the payload: the same record, for another provider.
	// The forged payload is a well-formed record; only the signature
	// stops it, and it is checked before the payload is parsed.
	forged, err := tamper(envelope, []byte(target.Provider), []byte("example:provider-b"))
	if err != nil {
		return err
	}
	_, err = conformance.Verify(set, forged)
	fmt.Fprintf(out, "tampered payload (provider-a -> provider-b): %s\n", outcome(err))

	// 5. A key the set does not hold signs the same record.
	stranger, _, err := signing.GenerateSigner(nil)
	if err != nil {
		return err
	}
	strange, err := conformance.Sign(stranger, rec)
	if err != nil {
		return err
	}
	_, err = conformance.Verify(set, strange)
	fmt.Fprintf(out, "signed by a key outside the set: %s\n", outcome(err))
	_, err = conformance.Verify(conformance.BuiltinAttesters(), envelope)
	fmt.Fprintf(out, "genuine receipt against the built-in (empty) set: %s\n", outcome(err))
	return nil
}

// setFile returns an attester set file holding signer's public key.
func setFile(name string, signer *signing.Signer) []byte {
	b, err := json.Marshal(map[string]any{"attesters": []map[string]string{{"name": name, "public_key_pem": string(signer.PublicKeyPEM())}}})
	if err != nil {
		panic(err) // only strings inside
	}
	return b
}

// tamper returns envelope with old replaced by new inside its payload,
// the signature left as it was.
func tamper(envelope, old, new []byte) ([]byte, error) {
	var e struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(envelope, &e); err != nil {
		return nil, err
	}
	payload, err := base64.StdEncoding.DecodeString(e.Payload)
	if err != nil {
		return nil, err
	}
	if bytes.Count(payload, old) != 1 {
		return nil, errors.New("the payload does not name the provider exactly once")
	}
	forged := bytes.Replace(payload, old, new, 1)
	if _, err := conformance.ParseRecord(forged); err != nil {
		return nil, fmt.Errorf("the forged payload is not a well-formed record: %w", err)
	}
	return bytes.Replace(envelope, []byte(e.Payload), []byte(base64.StdEncoding.EncodeToString(forged)), 1), nil
}

// outcome describes a verifier's answer: ok, or the refusal's code.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if code, ok := checkfu.CodeOf(err); ok {
		return "refused: " + string(code)
	}
	return "error: " + err.Error()
}
