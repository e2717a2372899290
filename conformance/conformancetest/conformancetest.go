package conformancetest

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strconv"
	"time"
	"unicode"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/signing"
)

var (
	providerPool = []string{"checkfu:daytona-provider", "checkfu:daytona-worker-provider", "checkfu:daytona", "checkfu:e2b-provider", "Checkfu:daytona-provider"}
	revisionPool = []string{"2", "20", "3", "2.0", "*", "02"}
)

// Text returns a generator of strings a record field accepts: 1 to 40
// runes of letters, marks, digits, punctuation, symbols and spaces, never
// a control character.
func Text() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom(nil, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs), 1, 40, 255)
}

// ProviderRevision returns a generator of exact provider revisions, half
// of them from a pool of near-identical names.
func ProviderRevision() *rapid.Generator[checkfu.ProviderRevision] {
	return rapid.Custom(func(t *rapid.T) checkfu.ProviderRevision {
		p := rapid.OneOf(rapid.SampledFrom(providerPool), Text()).Draw(t, "provider")
		r := rapid.OneOf(rapid.SampledFrom(revisionPool), Text()).Draw(t, "revision")
		return checkfu.ProviderRevision{Provider: p, Revision: r}
	})
}

// FactSet returns a generator of fact sets, complete about a third of the
// time.
func FactSet() *rapid.Generator[conformance.FactSet] {
	return rapid.Custom(func(t *rapid.T) conformance.FactSet {
		if rapid.IntRange(0, 2).Draw(t, "complete") == 0 {
			return conformance.AllFacts()
		}
		var facts []conformance.Fact
		for _, f := range conformance.Facts() {
			if rapid.Bool().Draw(t, string(f)) {
				facts = append(facts, f)
			}
		}
		s, err := conformance.NewFactSet(facts...)
		if err != nil {
			panic(err) // only valid facts are drawn
		}
		return s
	})
}

// Label returns a generator of the three evidence labels.
func Label() *rapid.Generator[checkfu.Label] {
	return rapid.SampledFrom([]checkfu.Label{checkfu.LabelMock, checkfu.LabelIsolated, checkfu.LabelProduction})
}

// Grade returns a generator of the three valid grades.
func Grade() *rapid.Generator[checkfu.Grade] {
	return rapid.SampledFrom([]checkfu.Grade{checkfu.Unsupported, checkfu.AdvisoryFilter, checkfu.SecurityBoundary})
}

// AnyGrade returns a generator of every uint8 value of checkfu.Grade,
// valid or not, favouring the valid ones.
func AnyGrade() *rapid.Generator[checkfu.Grade] {
	return rapid.OneOf(Grade(), rapid.Map(rapid.Uint8(), func(u uint8) checkfu.Grade { return checkfu.Grade(u) }))
}

// Record returns a generator of valid records with a zero Attester (the
// signer fills it in), any facts, any label, an issue time between 2000
// and 2100 and one to four distinct evidence digests.
func Record() *rapid.Generator[conformance.Record] {
	return rapid.Custom(func(t *rapid.T) conformance.Record {
		digests := rapid.SliceOfNDistinct(rapid.SliceOfN(rapid.Byte(), 1, 16), 1, 4, func(b []byte) string { return string(b) }).Draw(t, "evidence")
		r := conformance.Record{
			Target:   ProviderRevision().Draw(t, "target"),
			Facts:    FactSet().Draw(t, "facts"),
			Label:    Label().Draw(t, "label"),
			IssuedAt: time.Unix(rapid.Int64Range(946684800, 4102444800).Draw(t, "issued_at"), 0).UTC(),
		}
		for _, d := range digests {
			r.Evidence = append(r.Evidence, conformance.DigestOf(d))
		}
		return r
	})
}

// Signer returns a generator of attester signers whose keys derive from
// a drawn 32-byte seed.
func Signer() *rapid.Generator[*signing.Signer] {
	return rapid.Custom(func(t *rapid.T) *signing.Signer {
		seed := rapid.SliceOfN(rapid.Byte(), ed25519.SeedSize, ed25519.SeedSize).Draw(t, "seed")
		der, err := x509.MarshalPKCS8PrivateKey(ed25519.NewKeyFromSeed(seed))
		if err != nil {
			panic(err)
		}
		s, err := signing.ParsePrivateKeyPEM(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
		if err != nil {
			panic(err)
		}
		return s
	})
}

// AttesterSetFile returns the JSON of an attester set file listing the
// given signers' public keys, named "attester-0", "attester-1", ... in
// order. Pass it to signing.ParseAttesterSet.
func AttesterSetFile(signers ...*signing.Signer) []byte {
	type entry struct {
		Name         string `json:"name"`
		PublicKeyPEM string `json:"public_key_pem"`
	}
	file := struct {
		Attesters []entry `json:"attesters"`
	}{Attesters: []entry{}}
	for i, s := range signers {
		file.Attesters = append(file.Attesters, entry{Name: "attester-" + strconv.Itoa(i), PublicKeyPEM: string(s.PublicKeyPEM())})
	}
	b, err := json.Marshal(file)
	if err != nil {
		panic(err)
	}
	return b
}
