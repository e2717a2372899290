package adapters_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/admission"
)

// checkClause draws matching pairs, breaks clause c in each, and asserts
// that c, and only c, fails. Deleting clause c from MatchEvidence makes
// the test red (mutants_test.go applies each deletion).
func checkClause(t *testing.T, c adapters.Clause) {
	t.Helper()
	rapid.Check(t, func(t *rapid.T) {
		p := adaptertest.Break(t, adaptertest.Matching().Draw(t, "pair"), c)
		m := adapters.MatchEvidence(p.Held, p.Evidence)
		if !slices.Equal(m.Failed, []adapters.Clause{c}) {
			t.Fatalf("broke %s; failed %v", c, m.Failed)
		}
		err := m.Err()
		if !errors.Is(err, adapters.CodeEvidenceMismatch) || !strings.Contains(err.Error(), c.String()) {
			t.Fatalf("Err() = %v; want %s naming %s", err, adapters.CodeEvidenceMismatch, c)
		}
	})
}

func TestClauseInstance(t *testing.T)         { checkClause(t, adapters.ClauseInstance) }
func TestClauseProvider(t *testing.T)         { checkClause(t, adapters.ClauseProvider) }
func TestClauseProviderRevision(t *testing.T) { checkClause(t, adapters.ClauseProviderRevision) }
func TestClauseMaterializationRevision(t *testing.T) {
	checkClause(t, adapters.ClauseMaterializationRevision)
}
func TestClauseRootImage(t *testing.T)      { checkClause(t, adapters.ClauseRootImage) }
func TestClausePlatform(t *testing.T)       { checkClause(t, adapters.ClausePlatform) }
func TestClauseProfileDigest(t *testing.T)  { checkClause(t, adapters.ClauseProfileDigest) }
func TestClauseNetworkMode(t *testing.T)    { checkClause(t, adapters.ClauseNetworkMode) }
func TestClauseResourceLimits(t *testing.T) { checkClause(t, adapters.ClauseResourceLimits) }
func TestClauseLabelValid(t *testing.T)     { checkClause(t, adapters.ClauseLabelValid) }
func TestClauseEnforcementVocabulary(t *testing.T) {
	checkClause(t, adapters.ClauseEnforcementVocabulary)
}
func TestClauseLimitsNonnegative(t *testing.T) { checkClause(t, adapters.ClauseLimitsNonnegative) }
func TestClauseImagePinned(t *testing.T)       { checkClause(t, adapters.ClauseImagePinned) }
func TestClauseNetworkIsolated(t *testing.T)   { checkClause(t, adapters.ClauseNetworkIsolated) }
func TestClauseResourcesLimited(t *testing.T)  { checkClause(t, adapters.ClauseResourcesLimited) }
func TestClauseEnforcement(t *testing.T)       { checkClause(t, adapters.ClauseEnforcement) }

// TestEveryClauseHasATest pins that there are sixteen clauses, each
// named, so that a seventeenth cannot arrive without a test above.
func TestEveryClauseHasATest(t *testing.T) {
	cs := adapters.Clauses()
	if len(cs) != 16 {
		t.Fatalf("%d clauses, want 16", len(cs))
	}
	seen := map[string]bool{}
	for _, c := range cs {
		if n := c.String(); n == "" || strings.HasPrefix(n, "clause(") || seen[n] {
			t.Errorf("clause %d named %q", c, n)
		}
		seen[c.String()] = true
	}
}

// TestMatchingPasses: a matching pair fails no clause, and the result
// is the same every time (pure).
func TestMatchingPasses(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := adaptertest.Matching().Draw(t, "pair")
		m := adapters.MatchEvidence(p.Held, p.Evidence)
		if !m.OK() || m.Err() != nil {
			t.Fatalf("matching pair failed %v", m.Failed)
		}
		if m2 := adapters.MatchEvidence(p.Held, p.Evidence); !slices.Equal(m.Failed, m2.Failed) || m.Assurance != m2.Assurance {
			t.Fatal("MatchEvidence is not deterministic")
		}
	})
}

// TestMismatchFailsExactlyItsClause: a mismatch in any one field fails
// exactly its clause, whichever clause is drawn.
func TestMismatchFailsExactlyItsClause(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := rapid.SampledFrom(adapters.Clauses()).Draw(t, "clause")
		p := adaptertest.Break(t, adaptertest.Matching().Draw(t, "pair"), c)
		if m := adapters.MatchEvidence(p.Held, p.Evidence); !slices.Equal(m.Failed, []adapters.Clause{c}) {
			t.Fatalf("broke %s; failed %v", c, m.Failed)
		}
	})
}

// TestEveryFailureIsNamed: several broken clauses are all reported, in
// clause order.
func TestEveryFailureIsNamed(t *testing.T) {
	var h adapters.Held
	ev := adapters.Evidence{Instance: "other", Provider: "other", Label: 9}
	m := adapters.MatchEvidence(h, ev)
	want := []adapters.Clause{adapters.ClauseInstance, adapters.ClauseProvider, adapters.ClauseLabelValid}
	if !slices.Equal(m.Failed, want) {
		t.Fatalf("failed %v, want %v", m.Failed, want)
	}
	if msg := m.Err().Error(); !strings.Contains(msg, "instance, provider, label_valid") {
		t.Errorf("Err() = %q", msg)
	}
}

// TestAssurance: isolation_checked only for the in-process placement,
// whether or not the match passes; identity_only for remote and for an
// unknown placement.
func TestAssurance(t *testing.T) {
	for _, c := range []struct {
		pl   admission.Placement
		want adapters.Assurance
	}{
		{admission.PlacementInProcess, adapters.AssuranceIsolationChecked},
		{admission.PlacementRemote, adapters.AssuranceIdentityOnly},
		{"", adapters.AssuranceIdentityOnly},
		{"in-process", adapters.AssuranceIdentityOnly},
	} {
		for _, ev := range []adapters.Evidence{{}, {Instance: "x"}} {
			m := adapters.MatchEvidence(adapters.Held{Placement: c.pl}, ev)
			if m.Assurance != c.want {
				t.Errorf("placement %q: assurance %s, want %s", c.pl, m.Assurance, c.want)
			}
			if !m.OK() && !strings.Contains(m.Err().Error(), string(c.want)) {
				t.Errorf("placement %q: Err() does not record the assurance: %v", c.pl, m.Err())
			}
		}
	}
}

func TestIsDigest(t *testing.T) {
	good := "sha256:" + strings.Repeat("0a", 32)
	for s, want := range map[string]bool{
		good: true, "": false, "sha256:" + strings.Repeat("0A", 32): false, "sha256:": false, strings.ToUpper(good): false,
		"sha512:" + strings.Repeat("0a", 32): false, good + "0": false, good[:len(good)-1] + "g": false,
	} {
		if got := adapters.IsDigest(s); got != want {
			t.Errorf("IsDigest(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestHeldFor(t *testing.T) {
	d := adapters.Description{
		Identity: checkfu.ProviderRevision{Provider: "p", Revision: "1"}, MaterializationRevision: "m",
		Placement: admission.PlacementRemote,
	}
	d.Capability.Enforcement[admission.AxisImage] = admission.ProviderAttested
	spec := adapters.InstanceSpec{ID: "i", RootImage: "img", Platform: "linux/amd64", ProfileDigest: "pd", NetworkMode: "none", Limits: adapters.Limits{Pids: 3}}
	got := adapters.HeldFor(d, spec)
	want := adapters.Held{Instance: "i", Target: d.Identity, MaterializationRevision: "m", RootImage: "img", Platform: "linux/amd64",
		ProfileDigest: "pd", NetworkMode: "none", Limits: spec.Limits, Placement: admission.PlacementRemote, Enforcement: d.Capability.Enforcement}
	if got != want {
		t.Errorf("HeldFor = %+v\nwant %+v", got, want)
	}
}
