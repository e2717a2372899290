package daytona_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
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
}
