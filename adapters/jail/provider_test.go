//go:build linux

package jail_test

import (
	"errors"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
)

func TestCreateRefusesWhatItCannotApply(t *testing.T) {
	p := newProvider(t, jail.Config{})
	good := p.Spec("refuse", testDigest)
	for _, c := range []struct {
		name string
		edit func(*adapters.InstanceSpec)
		code checkfu.Code
	}{
		{"no ID", func(s *adapters.InstanceSpec) { s.ID = "" }, checkfu.CodeConfigInvalid},
		{"a root image", func(s *adapters.InstanceSpec) { s.RootImage = testDigest }, adapters.CodeSpecUnsupported},
		{"another platform", func(s *adapters.InstanceSpec) { s.Platform = "plan9/mips" }, adapters.CodeSpecUnsupported},
		{"network unrestricted", func(s *adapters.InstanceSpec) { s.NetworkMode = "unrestricted" }, adapters.CodeSpecUnsupported},
		{"allowlist without a guard", func(s *adapters.InstanceSpec) { s.NetworkMode = "allowlist" }, checkfu.CodeConfigInvalid},
		{"limits the kernel cannot apply", func(s *adapters.InstanceSpec) {
			if p.Support().Cgroups {
				s.Limits.Pids = 0 // with cgroups every limit must be asked
			} else {
				s.Limits.Pids = 10
			}
		}, adapters.CodeSpecUnsupported},
	} {
		s := good
		c.edit(&s)
		if _, err := jail.CreateForTest(t, p, s, ""); !errors.Is(err, c.code) {
			t.Errorf("%s: Create = %v, want %s", c.name, err, c.code)
		}
	}
}

func TestNewRefusesBadBinds(t *testing.T) {
	for _, b := range []jail.Bind{
		{Source: "/etc/hostname", Target: "/usr/bin/sh"},
		{Source: "/etc/hostname", Target: jail.BindRoot + "/../etc/x"},
		{Source: "relative", Target: jail.BindRoot + "/x"},
		{Source: "/nonexistent/checkfu", Target: jail.BindRoot + "/x"},
	} {
		if _, err := jail.New(jail.Config{Binds: []jail.Bind{b}}); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("bind %+v: New = %v, want %s", b, err, checkfu.CodeConfigInvalid)
		}
	}
}
