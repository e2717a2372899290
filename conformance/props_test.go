package conformance_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/conformance/conformancetest"

	"github.com/checkfu/checkfu/signing"
)

var cmpRecord = cmp.Comparer(func(a, b conformance.FactSet) bool { return a == b })

// The binary record and the JSON statement both round-trip every valid
// record exactly.
func TestPropRecordRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := conformancetest.Record().Draw(t, "record")
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary: %v", err)
		}
		back, err := conformance.ParseRecord(b)
		if err != nil {
			t.Fatalf("ParseRecord: %v", err)
		}
		if d := cmp.Diff(r, back, cmpRecord); d != "" {
			t.Fatalf("binary round trip (-want +got):\n%s", d)
		}
		again, _ := back.MarshalBinary()
		if !bytes.Equal(again, b) {
			t.Fatal("re-encoding changed the bytes")
		}
		js, err := r.Statement()
		if err != nil {
			t.Fatalf("Statement: %v", err)
		}
		fromJSON, err := conformance.ParseStatement(js)
		if err != nil {
			t.Fatalf("ParseStatement(%s): %v", js, err)
		}
		if d := cmp.Diff(r, fromJSON, cmpRecord); d != "" {
			t.Fatalf("statement round trip (-want +got):\n%s", d)
		}
	})
}

// A grade is never inferred, upgraded or averaged: the effective grade is
// security_boundary exactly when the provider advertises it AND a receipt
// from a reviewed attester certifies that exact pair with all five facts
// and production evidence; without such a receipt it never exceeds
// advisory_filter, and it never exceeds the advertisement.
func TestPropEffectiveGrade(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		signer := conformancetest.Signer().Draw(t, "signer")
		inSet := rapid.Bool().Draw(t, "in_set")
		var set *signing.AttesterSet
		if inSet {
			var err error
			if set, err = signing.ParseAttesterSet(conformancetest.AttesterSetFile(signer)); err != nil {
				t.Fatal(err)
			}
		} else {
			set = conformance.BuiltinAttesters()
		}
		rec := conformancetest.Record().Draw(t, "record")
		target := rapid.OneOf(rapid.Just(rec.Target), conformancetest.ProviderRevision()).Draw(t, "target")
		advertised := conformancetest.AnyGrade().Draw(t, "advertised")
		env, err := conformance.Sign(signer, rec)
		if err != nil {
			t.Fatal(err)
		}
		receipt, verr := conformance.Verify(set, env)
		if inSet != (verr == nil) {
			t.Fatalf("Verify with attester in set = %v: %v", inSet, verr)
		}
		if !inSet && !errors.Is(verr, signing.CodeAttesterUnknown) {
			t.Fatalf("Verify outside the set: %v", verr)
		}
		got := conformance.EffectiveGrade(target, advertised, receipt)

		certifies := inSet && rec.Target == target && rec.Facts.Complete() && rec.Label == checkfu.LabelProduction
		if (receipt.Certifies(target) == nil) != certifies {
			t.Fatalf("Certifies = %v, want certifying = %v", receipt.Certifies(target), certifies)
		}
		want := checkfu.Unsupported
		switch {
		case !advertised.Valid():
		case certifies:
			want = advertised
		default:
			want = min(advertised, checkfu.AdvisoryFilter)
		}
		if got != want {
			t.Fatalf("EffectiveGrade(%v, %v, certifies=%v) = %v, want %v", target, advertised, certifies, got, want)
		}
		if advertised.Valid() && got > advertised {
			t.Fatalf("effective %v above advertised %v", got, advertised)
		}
		if got == checkfu.SecurityBoundary && !certifies {
			t.Fatal("security_boundary without a certifying receipt")
		}
		if g := conformance.EffectiveGrade(target, advertised, nil); g > checkfu.AdvisoryFilter {
			t.Fatalf("advertisement alone reached %v", g)
		}
	})
}

// A receipt for one exact pair never moves any other pair: not a pair
// that differs only in revision, nor only in provider.
func TestPropReceiptIsExact(t *testing.T) {
	signer := conformancetest.Signer().Example(0)
	set, err := signing.ParseAttesterSet(conformancetest.AttesterSetFile(signer))
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		rec := conformancetest.Record().Draw(t, "record")
		rec.Facts, rec.Label = conformance.AllFacts(), checkfu.LabelProduction
		env, err := conformance.Sign(signer, rec)
		if err != nil {
			t.Fatal(err)
		}
		receipt, err := conformance.Certify(set, env, rec.Target)
		if err != nil {
			t.Fatalf("Certify(own pair): %v", err)
		}
		other := conformancetest.ProviderRevision().Draw(t, "other")
		if other == rec.Target {
			return
		}
		if g := conformance.EffectiveGrade(other, checkfu.SecurityBoundary, receipt); g != checkfu.AdvisoryFilter {
			t.Fatalf("receipt for %v graded %v as %v", rec.Target, other, g)
		}
		err = receipt.Certifies(other)
		want := conformance.CodeRevisionMismatch
		if other.Provider != rec.Target.Provider {
			want = conformance.CodeProviderMismatch
		}
		if !errors.Is(err, want) {
			t.Fatalf("Certifies(%v) = %v, want %s", other, err, want)
		}
	})
}

// Signing then verifying is the identity on records, and the verifier
// names exactly the signer.
func TestPropSignVerify(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		signers := rapid.SliceOfN(conformancetest.Signer(), 1, 3).Draw(t, "signers")
		keys := map[signing.KeyID]bool{}
		for _, s := range signers {
			if keys[s.KeyID()] {
				t.Skip("duplicate seed")
			}
			keys[s.KeyID()] = true
		}
		set, err := signing.ParseAttesterSet(conformancetest.AttesterSetFile(signers...))
		if err != nil {
			t.Fatal(err)
		}
		i := rapid.IntRange(0, len(signers)-1).Draw(t, "which")
		rec := conformancetest.Record().Draw(t, "record")
		env, err := conformance.Sign(signers[i], rec)
		if err != nil {
			t.Fatal(err)
		}
		receipt, err := conformance.Verify(set, env)
		if err != nil {
			t.Fatal(err)
		}
		rec.Attester = signers[i].KeyID()
		if d := cmp.Diff(rec, receipt.Record(), cmpRecord); d != "" {
			t.Fatalf("verified record differs (-signed +verified):\n%s", d)
		}
		if receipt.Attester().KeyID != signers[i].KeyID() || receipt.Attester().Name != set.Attesters()[i].Name {
			t.Fatalf("Attester = %+v, want signer %d", receipt.Attester(), i)
		}
	})
}

// Fact sets: Missing and List partition the five facts, and only the full
// set is complete.
func TestPropFactSet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := conformancetest.FactSet().Draw(t, "facts")
		if len(s.List())+len(s.Missing()) != 5 {
			t.Fatalf("List %v + Missing %v != 5 facts", s.List(), s.Missing())
		}
		if s.Complete() != (len(s.Missing()) == 0) {
			t.Fatalf("Complete = %v with missing %v", s.Complete(), s.Missing())
		}
		for _, f := range s.List() {
			if s.Without(f).Complete() || s.Without(f).Has(f) {
				t.Fatalf("%v without %s still has it", s, f)
			}
		}
	})
}
