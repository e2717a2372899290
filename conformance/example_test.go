package conformance_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"

	"github.com/checkfu/checkfu/signing"
)

// exampleKey is a fixed attester key so that the examples' output is
// deterministic. Never use a published key.
const exampleKey = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEINGoLlF1LEo8bxTAXNZsJS+OXvkkORoiab8+6wlz8dUo
-----END PRIVATE KEY-----
`

const exampleStatement = `{
  "provider": "checkfu:daytona-provider",
  "provider_revision": "2",
  "facts": ["exact_destination_match", "redirect_recheck", "connect_time_public_address", "authority_separation", "default_deny"],
  "label": "production",
  "evidence_digests": ["sha256:6f2a0e2a5d2c4b8f1e0e9d7c6b5a49382716f5e4d3c2b1a09f8e7d6c5b4a3928"],
  "issued_at": "2026-11-30T07:00:00Z"
}`

var daytona2 = checkfu.ProviderRevision{Provider: "checkfu:daytona-provider", Revision: "2"}

// exampleSetFile is the attester set file an operator would ship.
func exampleSetFile(signer *signing.Signer) []byte {
	b, _ := json.Marshal(map[string]any{"attesters": []map[string]string{{"name": "checkfu-release", "public_key_pem": string(signer.PublicKeyPEM())}}})
	return b
}

func exampleReceipt() (*signing.Signer, []byte) {
	signer, err := signing.ParsePrivateKeyPEM([]byte(exampleKey))
	if err != nil {
		panic(err)
	}
	rec, err := conformance.ParseStatement([]byte(exampleStatement))
	if err != nil {
		panic(err)
	}
	env, err := conformance.Sign(signer, rec)
	if err != nil {
		panic(err)
	}
	return signer, env
}

func ExampleSign() {
	_, env := exampleReceipt()
	var e struct {
		PayloadType string `json:"payloadType"`
		Signatures  []struct {
			KeyID string `json:"keyid"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(env, &e); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.PayloadType, len(e.Signatures))
	// Output: checkfu.sandbox-egress-conformance.v1 1
}

func ExampleParseStatement() {
	rec, err := conformance.ParseStatement([]byte(exampleStatement))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Target, rec.Facts.Complete(), rec.Label, rec.IssuedAt.Format("2006-01-02"))
	// Output: checkfu:daytona-provider@2 true production 2026-11-30
}

func ExampleParseRecord() {
	rec, _ := conformance.ParseStatement([]byte(exampleStatement))
	payload, _ := rec.MarshalBinary()
	back, err := conformance.ParseRecord(payload)
	fmt.Println(back.Target, err)
	_, err = conformance.ParseRecord(append(payload, 0))
	fmt.Println(err)
	// Output:
	// checkfu:daytona-provider@2 <nil>
	// refused: payload_noncanonical: conformance: payload has 1 trailing bytes
}

func ExampleBuiltinAttesters() {
	_, env := exampleReceipt()
	_, err := conformance.Verify(conformance.BuiltinAttesters(), env)
	fmt.Println(errors.Is(err, signing.CodeAttesterUnknown))
	// Output: true
}

func ExampleVerify() {
	signer, env := exampleReceipt()
	set, _ := signing.ParseAttesterSet(exampleSetFile(signer))
	receipt, err := conformance.Verify(set, env)
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := receipt.Record()
	fmt.Println(receipt.Attester().Name, "signed", rec.Facts, "for", rec.Target)
	// Output: checkfu-release signed exact_destination_match,redirect_recheck,connect_time_public_address,authority_separation,default_deny for checkfu:daytona-provider@2
}

func ExampleReceipt_Certifies() {
	signer, env := exampleReceipt()
	set, _ := signing.ParseAttesterSet(exampleSetFile(signer))
	receipt, _ := conformance.Verify(set, env)
	fmt.Println(receipt.Certifies(daytona2))
	worker := checkfu.ProviderRevision{Provider: "checkfu:daytona-worker-provider", Revision: "2"}
	code, _ := checkfu.CodeOf(receipt.Certifies(worker))
	fmt.Println(code)
	code, _ = checkfu.CodeOf(receipt.Certifies(checkfu.ProviderRevision{Provider: daytona2.Provider, Revision: "3"}))
	fmt.Println(code)
	// Output:
	// <nil>
	// provider_mismatch
	// revision_mismatch
}

func ExampleCertify() {
	signer, _ := signing.ParsePrivateKeyPEM([]byte(exampleKey))
	set, _ := signing.ParseAttesterSet(exampleSetFile(signer))
	rec, _ := conformance.ParseStatement([]byte(exampleStatement))
	rec.Facts = rec.Facts.Without(conformance.DefaultDeny)
	env, _ := conformance.Sign(signer, rec)
	_, err := conformance.Certify(set, env, daytona2)
	fmt.Println(err)
	// Output: refused: fact_missing: conformance: receipt for "checkfu:daytona-provider@2" lacks default_deny; a receipt missing any fact certifies nothing
}

func ExampleEffectiveGrade() {
	signer, env := exampleReceipt()
	set, _ := signing.ParseAttesterSet(exampleSetFile(signer))
	receipt, _ := conformance.Certify(set, env, daytona2)
	fmt.Println(conformance.EffectiveGrade(daytona2, checkfu.SecurityBoundary, nil))
	fmt.Println(conformance.EffectiveGrade(daytona2, checkfu.SecurityBoundary, receipt))
	fmt.Println(conformance.EffectiveGrade(daytona2, checkfu.AdvisoryFilter, receipt))
	// Output:
	// advisory_filter
	// security_boundary
	// advisory_filter
}

func ExampleFact_SelfAttestable() {
	for _, f := range conformance.Facts() {
		fmt.Println(f, f.SelfAttestable())
	}
	// Output:
	// exact_destination_match true
	// redirect_recheck true
	// connect_time_public_address false
	// authority_separation false
	// default_deny false
}

func ExampleRecord_Statement() {
	rec, _ := conformance.ParseStatement([]byte(exampleStatement))
	rec.Facts, _ = conformance.NewFactSet(conformance.ExactDestinationMatch, conformance.RedirectRecheck)
	rec.Label = checkfu.LabelIsolated
	js, _ := rec.Statement()
	fmt.Print(string(js))
	// Output:
	// {
	//   "provider": "checkfu:daytona-provider",
	//   "provider_revision": "2",
	//   "facts": [
	//     "exact_destination_match",
	//     "redirect_recheck"
	//   ],
	//   "label": "isolated",
	//   "evidence_digests": [
	//     "sha256:6f2a0e2a5d2c4b8f1e0e9d7c6b5a49382716f5e4d3c2b1a09f8e7d6c5b4a3928"
	//   ],
	//   "issued_at": "2026-11-30T07:00:00Z"
	// }
}

func ExampleNewFactSet() {
	s, _ := conformance.NewFactSet(conformance.ExactDestinationMatch, conformance.DefaultDeny)
	fmt.Println(s, s.Complete(), s.Missing())
	_, err := conformance.NewFactSet("dns_pinning")
	fmt.Println(err)
	// Output:
	// exact_destination_match,default_deny false [redirect_recheck connect_time_public_address authority_separation]
	// refused: record_invalid: conformance: "dns_pinning" is not a fact (want one of exact_destination_match, redirect_recheck, connect_time_public_address, authority_separation, default_deny)
}

func ExampleDigestOf() {
	d := conformance.DigestOf([]byte("matrix evidence"))
	back, err := conformance.ParseDigest(d.String())
	fmt.Println(back == d, err)
	// Output: true <nil>
}
