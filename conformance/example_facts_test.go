package conformance_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"

	"github.com/checkfu/checkfu/signing"
)

func ExampleFacts() {
	// A matrix report lists, in canonical order, which facts a run proved.
	proved, _ := conformance.NewFactSet(conformance.ExactDestinationMatch, conformance.RedirectRecheck)
	for _, f := range conformance.Facts() {
		fmt.Printf("%-28s %v\n", f, proved.Has(f))
	}
	// Output:
	// exact_destination_match      true
	// redirect_recheck             true
	// connect_time_public_address  false
	// authority_separation         false
	// default_deny                 false
}

func ExampleParseFact() {
	f, err := conformance.ParseFact("default_deny")
	fmt.Println(f, f.Valid(), err)

	// Names are exact: no case folding, no aliases.
	_, err = conformance.ParseFact("Default_Deny")
	fmt.Println(errors.Is(err, conformance.CodeRecordInvalid))
	// Output:
	// default_deny true <nil>
	// true
}

func ExampleAllFacts() {
	all := conformance.AllFacts()
	fmt.Println(all.Complete(), len(all.List()))

	// One fact short of complete certifies nothing.
	partial := all.Without(conformance.AuthoritySeparation)
	fmt.Println(partial.Complete(), partial.Missing())

	// The zero FactSet is empty.
	var none conformance.FactSet
	fmt.Println(none, none.Complete())
	// Output:
	// true 5
	// false [authority_separation]
	// none false
}

func ExampleParseDigest() {
	d, err := conformance.ParseDigest("sha256:6f2a0e2a5d2c4b8f1e0e9d7c6b5a49382716f5e4d3c2b1a09f8e7d6c5b4a3928")
	fmt.Println(err, d == conformance.Digest{})

	// One text form only: upper-case hex is refused, so two spellings
	// never name the same evidence.
	_, err = conformance.ParseDigest("sha256:" + strings.Repeat("AB", 32))
	fmt.Println(errors.Is(err, conformance.CodeRecordInvalid))
	// Output:
	// <nil> false
	// true
}

func ExampleRecord_Check() {
	rec := conformance.Record{
		Target:   checkfu.ProviderRevision{Provider: "checkfu:daytona-provider", Revision: "2"},
		Facts:    conformance.AllFacts(),
		Label:    checkfu.LabelProduction,
		IssuedAt: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC),
	}
	// No evidence digest: the record cannot be signed.
	err := rec.Check()
	fmt.Println(errors.Is(err, conformance.CodeRecordInvalid))

	rec.Evidence = []conformance.Digest{conformance.DigestOf([]byte("matrix run 1"))}
	fmt.Println(rec.Check())
	// Output:
	// true
	// <nil>
}

func ExampleRecord_MarshalJSON() {
	rec, _ := conformance.ParseStatement([]byte(exampleStatement))
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	var back conformance.Record
	err = json.Unmarshal(b, &back)
	fmt.Println(err, back.Target, back.Facts.Complete())

	// A misspelt key is refused, never ignored.
	err = json.Unmarshal([]byte(strings.Replace(string(b), `"label"`, `"Label"`, 1)), &back)
	fmt.Println(errors.Is(err, conformance.CodeRecordInvalid))
	// Output:
	// <nil> checkfu:daytona-provider@2 true
	// true
}

func ExampleReceipt_Record() {
	signer, env := exampleReceipt()
	set, _ := signing.ParseAttesterSet(exampleSetFile(signer))
	receipt, err := conformance.Verify(set, env)
	if err != nil {
		panic(err)
	}
	// What the attester signed: authorship, not truth. Certifies decides.
	rec := receipt.Record()
	fmt.Println(rec.Label, rec.Attester == signer.KeyID(), len(rec.Evidence))
	fmt.Println(receipt.Certifies(rec.Target))
	// Output:
	// production true 1
	// <nil>
}
