package conformancetest_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/conformance/conformancetest"
	"github.com/checkfu/checkfu/signing"
)

// The generators yield only values the conformance package accepts.
func TestGeneratorsYieldValidValues(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := conformancetest.Record().Draw(t, "record")
		if err := r.Check(); err != nil {
			t.Fatalf("Record() drew an invalid record: %v", err)
		}
		if g := conformancetest.Grade().Draw(t, "grade"); !g.Valid() {
			t.Fatalf("Grade() drew %v", g)
		}
		s := conformancetest.Signer().Draw(t, "signer")
		set, err := signing.ParseAttesterSet(conformancetest.AttesterSetFile(s))
		if err != nil {
			t.Fatalf("AttesterSetFile refused: %v", err)
		}
		env, err := conformance.Sign(s, r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conformance.Verify(set, env); err != nil {
			t.Fatalf("a generated signer's receipt does not verify: %v", err)
		}
	})
}

func ExampleRecord() {
	r := conformancetest.Record().Example(1)
	fmt.Println(r.Check() == nil)
	// Output: true
}

func ExampleAttesterSetFile() {
	signer := conformancetest.Signer().Example(1)
	set, err := signing.ParseAttesterSet(conformancetest.AttesterSetFile(signer))
	fmt.Println(set.Len(), set.Attesters()[0].Name, err)
	// Output: 1 attester-0 <nil>
}
