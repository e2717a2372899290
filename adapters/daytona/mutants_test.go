package daytona_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "Create drops the failed deletion of a sandbox it gave up", File: "client.go",
		Edits: []mutation.Edit{{Old: `		return vendorkit.Discard(ctx, err, "daytona", id, s.Destroy)`, New: `		_ = s.Destroy(context.WithoutCancel(ctx))
		return err`}},
		Kills: "TestCreateReportsASandboxItCouldNotRemove"},
	{Name: "allowlist widened to the domain list", File: "policy.go",
		Edits: []mutation.Edit{{Old: `	hosts := workload.AllowedHosts()
	first := ""`, New: `	hosts := workload.AllowedHosts()
	if len(hosts) > 0 {
		return Network{DomainAllowList: hosts[0].Host}, nil
	}
	first := ""`}},
		Kills: "TestMapPolicy"},
	{Name: "unrestricted allowed", File: "policy.go",
		Edits: []mutation.Edit{{Old: `	case egress.PolicyUnrestricted:
		return Network{}, checkfu.Refuse(`, New: `	case egress.PolicyUnrestricted:
		return Network{}, nil
		return Network{}, checkfu.Refuse(`}},
		Kills: "TestMapPolicy|TestCreateRefusesBeforeAnyRequest"},
	{Name: "stderr prefix ignored", File: "process.go",
		Edits: []mutation.Edit{{Old: `			d.cur, data = d.err, data[3:]`, New: `			d.cur, data = d.out, data[3:]`}},
		Kills: "TestSeparateStreamsAndExitCodes|TestDemuxAtEveryCut"},
	{Name: "prefix cut by a message boundary", File: "process.go",
		Edits: []mutation.Edit{{Old: `d.carry = append([]byte(nil), data...) // perhaps`, New: `d.write(d.cur, data) // perhaps`}},
		Kills: "TestDemuxAtEveryCut"},
	{Name: "stdin close claims success", File: "process.go",
		Edits: []mutation.Edit{{Old: `	return checkfu.Refuse(CodeStdinInexpressible, "daytona: a session's stdin cannot be closed; the process never sees end of input")`, New: `	return nil`}},
		Kills: "TestStdinGapsAreRefused"},
	{Name: "non-UTF-8 stdin sent", File: "process.go",
		Edits: []mutation.Edit{{Old: `if !utf8.Valid(line) {`, New: `if false && !utf8.Valid(line) {`}},
		Kills: "TestStdinGapsAreRefused"},
	{Name: "one live process (shared Slot)", File: "../internal/vendorkit/slot.go",
		Edits: []mutation.Edit{{Old: `	case s.live != zero:`, New: `	case false:`}},
		Kills: "TestKillReachesChildrenAndOneLiveProcess"},
	{Name: "masked server frame", File: "ws.go",
		Edits: []mutation.Edit{{Old: `if h[1]&0x80 != 0 {`, New: `if false {`}},
		Kills: "TestWSRefusesMaskedFrame"},
	{Name: "review2: command id not a vendor ID", File: "process.go",
		Edits: []mutation.Edit{{Old: `if !vendorkit.PathSafeID(p.cmdID, "") {`, New: `if p.cmdID == "" || strings.ContainsAny(p.cmdID, "/?#%") {`}},
		Kills: "TestCommandIDIsAVendorID"},
	{Name: "rt: toolbox URL checked only as a base URL", File: "client.go",
		Edits: []mutation.Edit{{Old: `if err := c.checkToolbox(proxy); err != nil {`, New: `if err := checkURL(proxy); err != nil {`}},
		Kills: "TestToolboxURLIsChecked"},
	{Name: "rt: toolbox on any host under a remote API", File: "client.go",
		Edits: []mutation.Edit{{Old: `ok = u.Scheme == "https" && vendorkit.PublicHost(h)`, New: `ok = u.Scheme == "https"`}},
		Kills: "TestToolboxURLIsChecked"},
	{Name: "rt: toolbox off loopback under a loopback API", File: "client.go",
		Edits: []mutation.Edit{{Old: `ok = vendorkit.LoopbackHost(h)`, New: `ok = true`}},
		Kills: "TestToolboxURLIsChecked"},
	{Name: "rt: configured toolbox hosts ignored", File: "client.go",
		Edits: []mutation.Edit{{Old: `ok = u.Scheme == "https" && slices.Contains(c.cfg.ToolboxHosts, strings.ToLower(strings.TrimSuffix(h, ".")))`, New: `ok = u.Scheme == "https"`}},
		Kills: "TestToolboxURLIsChecked"},
	{Name: "rt: toolbox control call unbounded", File: "process.go",
		Edits: []mutation.Edit{{Old: `	ctx, cancel := context.WithTimeout(context.Background(), vendorkit.ControlTimeout)
	defer cancel()
	return p.call(ctx, method, path, in, want...)`, New: `	return p.call(context.Background(), method, path, in, want...)`}},
		Kills: "TestKillIsBounded"},
	{Name: "rt: toolbox exit code outside 0-255", File: "process.go",
		Edits: []mutation.Edit{{Old: `if err != nil || code < 0 || code > 255 {`, New: `if err != nil {`}},
		Kills: "TestExitCodeOutOfRange"},
}
