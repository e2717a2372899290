package conformance

import (
	"strings"

	"github.com/checkfu/checkfu"
)

// A Fact is one of the five properties a conformance receipt must prove,
// all together, for a provider revision to reach security_boundary. Its
// value is its snake_case name.
type Fact string

// The five facts, in their canonical order (which is also their bit order
// in the binary record, bit 0 first).
const (
	// ExactDestinationMatch: a request reaches only a host and port a rule
	// names exactly. Positive and enumerable; self-attestable.
	ExactDestinationMatch Fact = "exact_destination_match"
	// RedirectRecheck: every redirect target is checked again as a new
	// destination. Positive and enumerable; self-attestable.
	RedirectRecheck Fact = "redirect_recheck"
	// ConnectTimePublicAddress: every resolved address, on every
	// connection, at connect time, was public. Proving it needs the
	// resolver; not self-attestable.
	ConnectTimePublicAddress Fact = "connect_time_public_address"
	// AuthoritySeparation: the workload egress edge holds no plane
	// credential, and workload and plane traffic ride separate sealed
	// authorities. A claim of non-possession; not self-attestable.
	AuthoritySeparation Fact = "authority_separation"
	// DefaultDeny: when any other fact is absent, nothing gets out. It
	// quantifies over paths the implementer did not think of; not
	// self-attestable.
	DefaultDeny Fact = "default_deny"
)

// allFacts is the canonical order; index i is bit i of the record.
var allFacts = [...]Fact{ExactDestinationMatch, RedirectRecheck, ConnectTimePublicAddress, AuthoritySeparation, DefaultDeny}

// Facts returns the five facts in canonical order.
func Facts() []Fact { return append([]Fact(nil), allFacts[:]...) }

// ParseFact parses the exact name of a fact. Anything else is refused with
// [CodeRecordInvalid].
func ParseFact(s string) (Fact, error) {
	for _, f := range allFacts {
		if s == string(f) {
			return f, nil
		}
	}
	return "", checkfu.Refuse(CodeRecordInvalid, "conformance: %s is not a fact (want one of %s)", checkfu.Quote(s), factNames())
}

func factNames() string {
	names := make([]string, len(allFacts))
	for i, f := range allFacts {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// Valid reports whether f is one of the five facts.
func (f Fact) Valid() bool { return f.bit() != 0 }

// SelfAttestable reports whether a party could prove f about its own
// implementation. Only ExactDestinationMatch and RedirectRecheck are: they
// are positive and enumerable. The other three are a negative claim about
// a moment that has not happened, a claim of non-possession, and a claim
// about paths nobody thought of; they need a matrix the claimant does not
// run. Whether a fact is self-attestable changes nothing about what a
// receipt needs: all five, from a reviewed attester.
func (f Fact) SelfAttestable() bool {
	return f == ExactDestinationMatch || f == RedirectRecheck
}

func (f Fact) bit() uint8 {
	for i, g := range allFacts {
		if f == g {
			return 1 << i
		}
	}
	return 0
}

// A FactSet is a set of facts. The zero FactSet is empty, which certifies
// nothing.
type FactSet struct{ bits uint8 }

// NewFactSet returns the set of the given facts. It refuses an invalid
// fact with [CodeRecordInvalid]; duplicates are harmless.
func NewFactSet(facts ...Fact) (FactSet, error) {
	var s FactSet
	for _, f := range facts {
		b := f.bit()
		if b == 0 {
			_, err := ParseFact(string(f))
			return FactSet{}, err
		}
		s.bits |= b
	}
	return s, nil
}

// AllFacts returns the set of all five facts.
func AllFacts() FactSet { return FactSet{1<<len(allFacts) - 1} }

// Has reports whether s contains f.
func (s FactSet) Has(f Fact) bool { b := f.bit(); return b != 0 && s.bits&b != 0 }

// Complete reports whether s holds all five facts.
func (s FactSet) Complete() bool { return s == AllFacts() }

// Without returns s minus f.
func (s FactSet) Without(f Fact) FactSet { return FactSet{s.bits &^ f.bit()} }

// List returns the facts of s in canonical order.
func (s FactSet) List() []Fact {
	var out []Fact
	for _, f := range allFacts {
		if s.Has(f) {
			out = append(out, f)
		}
	}
	return out
}

// Missing returns the facts not in s, in canonical order.
func (s FactSet) Missing() []Fact {
	var out []Fact
	for _, f := range allFacts {
		if !s.Has(f) {
			out = append(out, f)
		}
	}
	return out
}

// String returns the names of the facts in s, comma-separated, or "none".
func (s FactSet) String() string {
	if s.bits == 0 {
		return "none"
	}
	var b strings.Builder
	for i, f := range s.List() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(f))
	}
	return b.String()
}
