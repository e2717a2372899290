//go:build !linux

package jail

import (
	"context"
	"os"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
)

// Probe reports nothing offered: the jail is Linux only.
func Probe() Support { return Support{NamespacesErr: "not Linux"} }

func (p *Provider) probe() (Support, error) { return Probe(), nil }

func openInitProgram(string) (*os.File, error) {
	return nil, checkfu.Refuse(CodeKernelUnsupported, "jail: not Linux")
}

func (p *Provider) newInstance(context.Context, adapters.InstanceSpec, string) (adapters.Instance, error) {
	return nil, checkfu.Refuse(CodeKernelUnsupported, "jail: not Linux")
}
