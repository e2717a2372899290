package runner

import (
	"context"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/process"
)

// processProvider is package process's Provider with its Spec.
type processProvider struct{ process.Provider }

var _ Provider = processProvider{}

func (p processProvider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	return p.Provider.Create(ctx, spec)
}

func (processProvider) Spec(id, profileDigest string) adapters.InstanceSpec {
	return process.Spec(id, profileDigest)
}

// remoteProvider is package process's Remote with its Spec.
type remoteProvider struct{ process.Remote }

var _ Provider = remoteProvider{}

func (p remoteProvider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	return p.Remote.Create(ctx, spec)
}

func (remoteProvider) Spec(id, profileDigest string) adapters.InstanceSpec {
	return process.Spec(id, profileDigest)
}
