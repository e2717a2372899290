package admission

import (
	"slices"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// A Diff is what changed between two published versions of a profile,
// from the workload's side: where it can now reach that it could not
// (widened), and where it no longer can (narrowed).
type Diff struct {
	// OldVersion and NewVersion are the two version numbers.
	OldVersion, NewVersion int
	// OldType and NewType are the members of the policy union.
	OldType, NewType egress.PolicyType
	// Widened lists hosts the new version reaches and the old did not;
	// Narrowed the reverse. Both sorted.
	Widened, Narrowed []HostGrant
	// OldRequirement and NewRequirement are the egress requirements.
	OldRequirement, NewRequirement checkfu.Requirement
	// OldCatalog and NewCatalog are the preset catalog versions.
	OldCatalog, NewCatalog string
	// OldImage and NewImage are the derived image digests.
	OldImage, NewImage string
}

// reach orders the union members by how far the workload reaches.
var reach = map[egress.PolicyType]int{egress.PolicyNone: 0, egress.PolicyAllowlist: 1, egress.PolicyUnrestricted: 2}

// Widens reports whether the new version lets the workload reach anything
// the old did not, or asks less of the provider: a wider member of the
// union, a widened host, or a lower egress requirement.
func (d Diff) Widens() bool {
	return reach[d.NewType] > reach[d.OldType] || len(d.Widened) > 0 ||
		d.NewRequirement.Min() < d.OldRequirement.Min()
}

// DiffVersions compares two published versions. Host sets are compared
// as exact (host, port) pairs. An unrestricted side reaches every public
// host, so going to it widens by type and going from it widens nothing.
func DiffVersions(old, new *Published) Diff {
	d := Diff{
		OldVersion: old.Version(), NewVersion: new.Version(),
		OldType: old.PolicyType(), NewType: new.PolicyType(),
		OldRequirement: old.Requirement(), NewRequirement: new.Requirement(),
		OldCatalog: old.CatalogVersion(), NewCatalog: new.CatalogVersion(),
		OldImage: old.DerivedImageDigest(), NewImage: new.DerivedImageDigest(),
	}
	oh, nh := old.Hosts(), new.Hosts()
	// An unrestricted side reaches every public host: nothing is widened
	// from it, and nothing narrowed to it.
	if d.OldType == egress.PolicyUnrestricted {
		nh = nil
	}
	if d.NewType == egress.PolicyUnrestricted {
		oh = nil
	}
	for _, h := range nh {
		if _, ok := slices.BinarySearchFunc(oh, h, compareGrant); !ok {
			d.Widened = append(d.Widened, h)
		}
	}
	for _, h := range oh {
		if _, ok := slices.BinarySearchFunc(nh, h, compareGrant); !ok {
			d.Narrowed = append(d.Narrowed, h)
		}
	}
	return d
}
