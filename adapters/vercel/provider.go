package vercel

import (
	"context"
	"io"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

// A Provider is Vercel Sandbox as an [adapters.Provider]: each instance is one
// Vercel sandbox session.
type Provider struct {
	// Client creates the sandboxes. Required.
	Client *Client
}

var _ adapters.Provider = (*Provider)(nil)

// Describe returns the provider's declarations: [Identity],
// [MaterializationRevision], [Placement] and [Capability]; no optional
// member; and the gaps of Vercel's command API ([Gaps]).
func (p *Provider) Describe() adapters.Description {
	return adapters.Description{Identity: Identity, MaterializationRevision: MaterializationRevision, Placement: Placement, Capability: Capability(), Gaps: Gaps}
}

// Create makes one sandbox for spec. A network mode, platform, image or
// limit outside the capability is refused with adapters'
// spec_unsupported; Vercel chooses the image, so none may be named.
func (p *Provider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	if p.Client == nil || spec.ID == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "vercel: a Provider needs a Client, and a spec an ID")
	}
	policy, err := vendorkit.CheckInstance(vendorkit.Offer{Vendor: "vercel", Capability: Capability()}, spec)
	if err != nil {
		return nil, err
	}
	s, err := p.Client.Create(ctx, SandboxSpec{ID: spec.ID, Policy: policy, ProfileDigest: spec.ProfileDigest})
	if err != nil {
		return nil, err
	}
	return instance{s}, nil
}

type instance struct{ s *Sandbox }

func (i instance) ID() string                        { return i.s.ID() }
func (i instance) Destroy(ctx context.Context) error { return i.s.Destroy(ctx) }

func (i instance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	p, err := i.s.OpenProcess(ctx, Command{Argv: spec.Argv, Env: spec.Env, Dir: spec.Dir})
	if err != nil {
		return nil, err
	}
	return process{p}, nil
}

type process struct{ p *Process }

func (p process) Stdin() io.WriteCloser { return p.p.Stdin() }
func (p process) Stdout() io.Reader     { return p.p.Stdout() }
func (p process) Stderr() io.Reader     { return p.p.Stderr() }
func (p process) Wait() (int, error)    { return p.p.Wait() }
func (p process) Kill() error           { return p.p.Kill() }

// Evidence is the process's [Evidence] in the contract's vocabulary.
func (p process) Evidence() adapters.Evidence {
	e := p.p.Evidence()
	return adapters.Evidence{
		Label: e.Label, Instance: e.Instance, Provider: e.Provider, ProviderRevision: e.ProviderRevision,
		MaterializationRevision: e.MaterializationRevision, Platform: e.Platform,
		ProfileDigest: e.ProfileDigest, NetworkMode: e.NetworkMode, Enforcement: e.Enforcement,
	}
}
