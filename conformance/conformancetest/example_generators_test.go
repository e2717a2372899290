package conformancetest_test

import (
	"fmt"
	"testing"
	"unicode"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/conformance/conformancetest"
	"github.com/checkfu/checkfu/signing"
)

// The generators are meant for an integrator's rapid properties. This one
// checks a platform's grade logic against conformance.EffectiveGrade: a
// receipt never raises a grade above what the provider advertises, and
// only a complete production receipt reaches security_boundary. It needs
// a test's *testing.T, so it is compiled, not run.
func Example_property() {
	testGrade := func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			signer := conformancetest.Signer().Draw(t, "signer")
			set, err := signing.ParseAttesterSet(conformancetest.AttesterSetFile(signer))
			if err != nil {
				t.Fatal(err)
			}
			rec := conformancetest.Record().Draw(t, "record")
			rec.Facts = conformancetest.FactSet().Draw(t, "facts")
			rec.Label = conformancetest.Label().Draw(t, "label")
			env, err := conformance.Sign(signer, rec)
			if err != nil {
				t.Fatal(err)
			}
			receipt, err := conformance.Verify(set, env)
			if err != nil {
				t.Fatal(err)
			}
			target := conformancetest.ProviderRevision().Draw(t, "target")
			advertised := conformancetest.AnyGrade().Draw(t, "advertised")
			got := conformance.EffectiveGrade(target, advertised, receipt)
			if got > advertised && advertised.Valid() {
				t.Fatalf("EffectiveGrade raised %v to %v", advertised, got)
			}
			if got == checkfu.SecurityBoundary && receipt.Certifies(target) != nil {
				t.Fatalf("security_boundary without a certifying receipt: %v", receipt.Certifies(target))
			}
		})
	}
	_ = testGrade // func TestGrade(t *testing.T) in a _test.go file
}

// Outside rapid.Check, Example draws one value for a given seed: handy to
// see what a generator yields.
func ExampleGrade() {
	for i := range 20 {
		if g := conformancetest.Grade().Example(i); !g.Valid() {
			fmt.Println("invalid grade", g)
		}
	}
	fmt.Println("all valid")
	// Output: all valid
}

func ExampleAnyGrade() {
	// Every uint8, so a parser or a switch meets the invalid values too.
	invalid := 0
	for i := range 200 {
		if !conformancetest.AnyGrade().Example(i).Valid() {
			invalid++
		}
	}
	fmt.Println(invalid > 0)
	// Output: true
}

func ExampleLabel() {
	seen := map[checkfu.Label]bool{}
	for i := range 100 {
		seen[conformancetest.Label().Example(i)] = true
	}
	fmt.Println(seen[checkfu.LabelMock], seen[checkfu.LabelIsolated], seen[checkfu.LabelProduction])
	// Output: true true true
}

func ExampleProviderRevision() {
	target := conformancetest.ProviderRevision().Example(3)
	fmt.Println(target.Provider != "", target.Revision != "")
	// Output: true true
}

func ExampleFactSet() {
	complete, partial := 0, 0
	for i := range 100 {
		if conformancetest.FactSet().Example(i).Complete() {
			complete++
		} else {
			partial++
		}
	}
	fmt.Println(complete > 0, partial > 0)
	// Output: true true
}

func ExampleSigner() {
	signer := conformancetest.Signer().Example(1)
	rec := conformancetest.Record().Example(1)
	env, err := conformance.Sign(signer, rec)
	if err != nil {
		panic(err)
	}
	set, _ := signing.ParseAttesterSet(conformancetest.AttesterSetFile(signer))
	receipt, err := conformance.Verify(set, env)
	fmt.Println(err, receipt.Record().Attester == signer.KeyID())
	// Output: <nil> true
}

func ExampleText() {
	ok := true
	for i := range 50 {
		for _, r := range conformancetest.Text().Example(i) {
			ok = ok && !unicode.IsControl(r)
		}
	}
	fmt.Println(ok)
	// Output: true
}
