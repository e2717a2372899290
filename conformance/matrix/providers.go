package matrix

import (
	"sort"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/conformance"
)

// A Provider is one entry of the matrix's provider table: a provider the
// matrix can run against, or one it reports as unable to hold a fact by
// construction.
type Provider struct {
	// Name is the exact provider name a statement names.
	Name string
	// Revision is the revision a run names when the caller gives none.
	Revision string
	// Runnable reports whether the matrix has a topology for it (the
	// Docker reference guard topology, or the namespace topology of the
	// jail) on which Run produces every case.
	Runnable bool
	// Cannot lists the facts the provider cannot hold, and why. A
	// provider with any stays at advisory_filter, whatever else holds.
	Cannot map[conformance.Fact]string
}

// Ceiling returns the highest grade the provider can reach through the
// matrix: advisory_filter when it cannot hold some fact, security_boundary
// otherwise (reached only with a production receipt).
func (p Provider) Ceiling() checkfu.Grade {
	if len(p.Cannot) > 0 {
		return checkfu.AdvisoryFilter
	}
	return checkfu.SecurityBoundary
}

// DockerProvider is the reference: checkfu's own Docker adapter, whose
// guard the matrix builds from the checkfu binary under test.
const DockerProvider = "checkfu:docker-provider"

// providers is the table, by name.
var providers = map[string]Provider{
	DockerProvider: {Name: DockerProvider, Revision: "1", Runnable: true},
	JailProvider:   {Name: JailProvider, Revision: jail.Revision, Runnable: true},
	"checkfu:e2b-provider": {Name: "checkfu:e2b-provider", Revision: "1", Cannot: map[conformance.Fact]string{
		conformance.AuthoritySeparation: "E2B validates the workload and plane authorities separately, then flattens them into the provider's single allowOut list: its API has no authority dimension, so workload and plane traffic cannot ride separate authorities",
	}},
}

// LookupProvider returns the table's entry for name, or a refusal with
// [CodeMatrixProviderMissing].
func LookupProvider(name string) (Provider, error) {
	p, ok := providers[name]
	if !ok {
		return Provider{}, checkfu.Refuse(CodeMatrixProviderMissing, "matrix: no provider %s in the matrix's table (known: %v)", checkfu.Quote(name), ProviderNames())
	}
	return p, nil
}

// ProviderNames returns the table's names, sorted.
func ProviderNames() []string {
	var out []string
	for n := range providers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
