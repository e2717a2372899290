package daytona

import (
	"context"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

// A Provider is Daytona as an [adapters.Provider]: each instance is one
// sandbox from the Client's snapshot.
type Provider struct {
	// Client creates the sandboxes. Required.
	Client *Client
}

var _ adapters.Provider = (*Provider)(nil)

// Describe returns the provider's declarations: [Identity],
// [MaterializationRevision], [Placement] and [Capability]; no optional
// member; and the gaps of a session's streams ([Gaps]).
func (p *Provider) Describe() adapters.Description {
	return adapters.Description{Identity: Identity(), MaterializationRevision: MaterializationRevision, Placement: Placement, Capability: Capability(), Gaps: Gaps()}
}

// Create makes one sandbox for spec. A network mode, platform, image or
// limit outside the capability is refused with adapters'
// spec_unsupported; the image, when named, must be the snapshot.
func (p *Provider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	if p.Client == nil || spec.ID == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "daytona: a Provider needs a Client, and a spec an ID")
	}
	policy, err := vendorkit.CheckInstance(vendorkit.Offer{Vendor: "daytona", Capability: Capability(), Image: p.Client.cfg.Snapshot}, spec)
	if err != nil {
		return nil, err
	}
	s, err := p.Client.Create(ctx, SandboxSpec{ID: spec.ID, Policy: policy, ProfileDigest: spec.ProfileDigest})
	if err != nil {
		return nil, err
	}
	return vendorkit.Instance(s, func(ctx context.Context, spec adapters.ProcessSpec) (*Process, error) {
		return s.OpenProcess(ctx, Command{Argv: spec.Argv, Env: spec.Env, Dir: spec.Dir})
	}, contractEvidence), nil
}

// contractEvidence is p's [Evidence] in the contract's vocabulary.
func contractEvidence(p *Process) adapters.Evidence {
	e := p.Evidence()
	return adapters.Evidence{
		Label: e.Label, Instance: e.Instance, Provider: e.Provider, ProviderRevision: e.ProviderRevision,
		MaterializationRevision: e.MaterializationRevision, RootImage: e.RootImage, Platform: e.Platform,
		ProfileDigest: e.ProfileDigest, NetworkMode: e.NetworkMode, Enforcement: e.Enforcement,
	}
}
