package docker

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants proves each isolation check is tested: every mutant
// deletes or inverts one, and a named test must go red. Run with
// CHECKFU_MUTANTS=1 and a Docker engine.
func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "service address inside the outer network, off the topology's own", File: "service.go",
		Edits: []mutation.Edit{{Old: `if !a.outer.Contains(spec.IP) || spec.IP == a.addr(a.outer, 1) || spec.IP == a.addr(a.outer, 2) {`, New: `if false {`}},
		Kills: "TestStartServiceRefusesBadSpecs"},
	{Name: "one live process: no reservation check", File: "instance.go",
		Edits: []mutation.Edit{{Old: `	case i.live != nil:`, New: `	case false:`}},
		Kills: "TestOneLiveProcess"},
	{Name: "root user allowed", File: "instance.go",
		Edits: []mutation.Edit{{Old: `return u == "root" || strings.TrimLeft(u, "0") == "" && u != ""`, New: `return u == "" && false`}},
		Kills: "TestCreateInstanceRefusesRoot"},
	{Name: "root file system writable", File: "instance.go",
		Edits: []mutation.Edit{{Old: `		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},`, New: `		CapDrop:        []string{"ALL"},`}},
		Kills: "TestIsolation"},
	{Name: "capabilities kept", File: "instance.go",
		Edits: []mutation.Edit{{Old: `		CapDrop:        []string{"ALL"},
		SecurityOpt:`, New: `		SecurityOpt:`}},
		Kills: "TestIsolation"},
	{Name: "no-new-privileges dropped", File: "instance.go",
		Edits: []mutation.Edit{{Old: `		SecurityOpt:    []string{"no-new-privileges"},`, New: ``}},
		Kills: "TestIsolation"},
	{Name: "network none becomes the default bridge", File: "instance.go",
		Edits: []mutation.Edit{{Old: `		NetworkMode:    "none",`, New: `		NetworkMode:    "bridge",`}},
		Kills: "(TestIsolation|TestNetworkNone)"},
	{Name: "tmpfs /tmp not world-writable", File: "instance.go",
		Edits: []mutation.Edit{{Old: `size=64m,mode=1777"`, New: `size=64m,mode=1755"`}},
		Kills: "TestIsolation"},
	{Name: "memory limit dropped", File: "instance.go",
		Edits: []mutation.Edit{{Old: `		Memory:         i.cfg.MemoryBytes,`, New: ``}},
		Kills: "TestIsolation"},
	{Name: "read-back check of the root file system deleted", File: "instance.go",
		Edits: []mutation.Edit{{Old: `	check(ev.ReadonlyRootfs, "read-only root")`, New: ``}},
		Kills: "TestCheckIsolationRefusesEachField"},
	{Name: "read-back check of capabilities deleted", File: "instance.go",
		Edits: []mutation.Edit{{Old: `	check(slices.Equal(ev.CapDrop, []string{"ALL"}) && len(ev.CapAdd) == 0, "capabilities")`, New: ``}},
		Kills: "TestCheckIsolationRefusesEachField"},
	{Name: "read-back check of the network mode deleted", File: "instance.go",
		Edits: []mutation.Edit{{Old: `	check(ev.NetworkMode == want.NetworkMode, "network mode")`, New: ``}},
		Kills: "TestCheckIsolationRefusesEachField"},
	{Name: "inhibit_ipv4 not set", File: "topology.go",
		Edits: []mutation.Edit{{Old: `		opts["com.docker.network.bridge.inhibit_ipv4"] = "true"`, New: ``}},
		Kills: "TestAllowlistTopology"},
	{Name: "INPUT drop not installed", File: "topology.go",
		Edits: []mutation.Edit{{Old: `"INPUT", "-i", a.innerBridge, "-j", "DROP"); err != nil {`, New: `"INPUT", "-i", a.innerBridge, "-j", "ACCEPT"); err != nil {`}},
		Kills: "TestAllowlistTopology"},
	{Name: "both host fixes gone: the probes must see the leak", File: "topology.go",
		Edits: []mutation.Edit{
			{Old: `		opts["com.docker.network.bridge.inhibit_ipv4"] = "true"`, New: ``},
			{Old: `	if !cfg.withoutHostFix {
		for _, bin`, New: `	if false {
		for _, bin`},
		},
		Kills: "TestAllowlistTopology"},
	{Name: "read-back check of the set of networks deleted", File: "instance.go",
		Edits: []mutation.Edit{{Old: `	check(slices.Equal(ev.Networks, []string{want.NetworkMode}), "set of networks")`, New: ``}},
		Kills: "TestCheckIsolationRefusesEachField"},
	{Name: "allowlist workload keeps the engine's upstream DNS", File: "instance.go",
		Edits: []mutation.Edit{{Old: `		hc.Dns = []string{BlackholeDNS}`, New: ``}},
		Kills: "TestAllowlistTopology"},
	// Without NetworkMode the workload is still attached to the inner
	// network through its endpoint while the engine reports NetworkMode
	// none; only the network-set read-back check refuses it.
	{Name: "workload not on the internal network", File: "instance.go",
		Edits: []mutation.Edit{{Old: `		hc.NetworkMode = i.cfg.Allowlist.innerName`, New: ``}},
		Kills: "TestAllowlistTopology"},
	{Name: "the exit wait bound to the open's context", File: "instance.go",
		Edits: []mutation.Edit{{Old: `c.WaitNextExit(context.WithoutCancel(ctx), id)`, New: `c.WaitNextExit(ctx, id)`}},
		Kills: "TestOpenContextBoundsOnlyTheOpen"},
	{Name: "provider: any network mode accepted", File: "provider.go",
		Edits: []mutation.Edit{{Old: `	case spec.NetworkMode != "none":`, New: `	case false:`}},
		Kills: "TestProviderRefusesUnsupportedSpecs"},
	{Name: "provider: limits not required", File: "provider.go",
		Edits: []mutation.Edit{{Old: `	case l.MemoryBytes < 6<<20 || l.Pids < 1 || l.NanoCPUs < 1_000_000:`, New: `	case false:`}},
		Kills: "TestProviderRefusesUnsupportedSpecs"},
	{Name: "provider: image axis claimed without the read-back", File: "provider.go",
		Edits: []mutation.Edit{{Old: `set(admission.AxisImage, ev.ImageID == image)`, New: `set(admission.AxisImage, true)`}},
		Kills: "TestEnforcementFollowsReadBack"},
	{Name: "provider: process isolation claimed without the read-back", File: "provider.go",
		Edits: []mutation.Edit{{Old: `ev.PidMode == "" && ev.IpcMode == "private" && !ev.Privileged)`, New: `true)`}},
		Kills: "TestEnforcementFollowsReadBack"},
	{Name: "provider: root image echoed from the spec", File: "provider.go",
		Edits: []mutation.Edit{{Old: `		RootImage:               ev.ImageID,`, New: `		RootImage:               i.spec.RootImage,`}},
		Kills: "TestEvidenceMapping"},
	{Name: "provider: limits echoed from the spec", File: "provider.go",
		Edits: []mutation.Edit{{Old: `Limits:                  adapters.Limits{MemoryBytes: ev.MemoryBytes, Pids: ev.PidsLimit, NanoCPUs: ev.NanoCPUs},`, New: `Limits: i.spec.Limits,`}},
		Kills: "TestEvidenceMapping"},
	{Name: "provider: networks listed without dropping none", File: "provider.go",
		Edits: []mutation.Edit{{Old: `if n != "none" || ev.NetworkMode != "none" {`, New: `if true {`}},
		Kills: "TestEvidenceMapping"},
	{Name: "namespaces not read back", File: "instance.go",
		Edits: []mutation.Edit{{Old: `	check(ev.PidMode == "" && ev.IpcMode == want.IpcMode && !ev.Privileged, "namespaces")`, New: ``}},
		Kills: "TestCheckIsolationRefusesEachField"},
	{Name: "mounts not read back", File: "instance.go",
		Edits: []mutation.Edit{{Old: `	check(slices.Equal(ev.ExtraMounts, askedMounts(want)), "set of mounts")`, New: ``}},
		Kills: "TestCheckIsolationRefusesEachField"},
}
