//go:build !linux

package jail

import (
	"context"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
)

// InitMain does nothing: there is no jail on this system.
func InitMain() {}

// Probe reports nothing offered: the jail is Linux only.
func Probe() Support { return Support{NamespacesErr: "not Linux"} }

func (p *Provider) newInstance(context.Context, adapters.InstanceSpec, string) (adapters.Instance, error) {
	return nil, checkfu.Refuse(CodeKernelUnsupported, "jail: not Linux")
}
