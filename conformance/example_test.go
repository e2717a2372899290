package conformance_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
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
func exampleSetFile(signer *conformance.Signer) []byte {
	b, _ := json.Marshal(map[string]any{"attesters": []map[string]string{{"name": "checkfu-release", "public_key_pem": string(signer.PublicKeyPEM())}}})
	return b
}

func exampleReceipt() (*conformance.Signer, []byte) {
	signer, err := conformance.ParsePrivateKeyPEM([]byte(exampleKey))
	if err != nil {
		panic(err)
	}
	rec, err := conformance.ParseStatement([]byte(exampleStatement))
	if err != nil {
		panic(err)
	}
	env, err := signer.Sign(rec)
	if err != nil {
		panic(err)
	}
	return signer, env
}

func ExampleParsePrivateKeyPEM() {
	signer, err := conformance.ParsePrivateKeyPEM([]byte(exampleKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("key id:", signer.KeyID())
	fmt.Print(string(signer.PublicKeyPEM()))
	// Output:
	// key id: 9ffd5db67699bdb0bc2ec36a1e2d1bfbb03bcf3db499cfcf9ca52ae0ee244fb4
	// -----BEGIN PUBLIC KEY-----
	// MCowBQYDK2VwAyEAL+XIuP8rh1/93MLXfmm3EA4yjVlG4DiWMIf0+7VIcL0=
	// -----END PUBLIC KEY-----
}

func ExampleGenerateSigner() {
	signer, privatePEM, err := conformance.GenerateSigner(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	again, err := conformance.ParsePrivateKeyPEM(privatePEM)
	fmt.Println(err == nil && again.KeyID() == signer.KeyID())
	// Output: true
}

func ExampleSigner_Sign() {
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

func ExampleParseAttesterSet() {
	signer, _ := conformance.ParsePrivateKeyPEM([]byte(exampleKey))
	set, err := conformance.ParseAttesterSet(exampleSetFile(signer))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range set.Attesters() {
		fmt.Println(a.Name, a.KeyID == signer.KeyID())
	}
	// The identity point as a key would make one fixed signature verify
	// for every message; admission refuses it.
	_, err = conformance.ParseAttesterSet([]byte(`{"attesters":[{"name":"evil","public_key_pem":"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n-----END PUBLIC KEY-----\n"}]}`))
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// checkfu-release true
	// key_small_order
}

func ExampleLoadAttesterSet() {
	signer, _ := conformance.ParsePrivateKeyPEM([]byte(exampleKey))
	dir, _ := os.MkdirTemp("", "attesters")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "attesters.json")
	_ = os.WriteFile(path, exampleSetFile(signer), 0o644)
	set, err := conformance.LoadAttesterSet(path)
	fmt.Println(set.Len(), err)
	// Output: 1 <nil>
}

func ExampleBuiltinAttesters() {
	_, env := exampleReceipt()
	_, err := conformance.BuiltinAttesters().Verify(env)
	fmt.Println(errors.Is(err, conformance.CodeAttesterUnknown))
	// Output: true
}

func ExampleAttesterSet_Verify() {
	signer, env := exampleReceipt()
	set, _ := conformance.ParseAttesterSet(exampleSetFile(signer))
	receipt, err := set.Verify(env)
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
	set, _ := conformance.ParseAttesterSet(exampleSetFile(signer))
	receipt, _ := set.Verify(env)
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

func ExampleAttesterSet_Certify() {
	signer, _ := conformance.ParsePrivateKeyPEM([]byte(exampleKey))
	set, _ := conformance.ParseAttesterSet(exampleSetFile(signer))
	rec, _ := conformance.ParseStatement([]byte(exampleStatement))
	rec.Facts = rec.Facts.Without(conformance.DefaultDeny)
	env, _ := signer.Sign(rec)
	_, err := set.Certify(env, daytona2)
	fmt.Println(err)
	// Output: refused: fact_missing: conformance: receipt for "checkfu:daytona-provider@2" lacks default_deny; a receipt missing any fact certifies nothing
}

func ExampleEffectiveGrade() {
	signer, env := exampleReceipt()
	set, _ := conformance.ParseAttesterSet(exampleSetFile(signer))
	receipt, _ := set.Certify(env, daytona2)
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

func ExampleKeyIDOf() {
	signer, _ := conformance.ParsePrivateKeyPEM([]byte(exampleKey))
	id, err := conformance.KeyIDOf(signer.PublicKeyPEM())
	fmt.Println(id == signer.KeyID(), err)
	// Output: true <nil>
}

func ExampleLoadSigner() {
	dir, _ := os.MkdirTemp("", "signer")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "key.pem")
	_ = os.WriteFile(path, []byte(exampleKey), 0o600)
	signer, err := conformance.LoadSigner(path)
	fmt.Println(signer.KeyID(), err)
	// Output: 9ffd5db67699bdb0bc2ec36a1e2d1bfbb03bcf3db499cfcf9ca52ae0ee244fb4 <nil>
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
