package vercel_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "NonPublicIPv4 hands out the table unrestricted denies", File: "policy.go",
		Edits: []mutation.Edit{{Old: "func NonPublicIPv4() []string { return slices.Clone(nonPublicIPv4[:]) }", New: "func NonPublicIPv4() []string { return nonPublicIPv4[:] }"}},
		Kills: "TestNonPublicIsACopy"},
	{Name: "allowlist widened to the domain list", File: "policy.go",
		Edits: []mutation.Edit{{Old: `	hosts := workload.AllowedHosts()
	first := ""`, New: `	hosts := workload.AllowedHosts()
	if len(hosts) > 0 {
		return NetworkPolicy{AllowDomains: []string{hosts[0].Host}}, nil
	}
	first := ""`}},
		Kills: "TestMapPolicy"},
	{Name: "a non-public range dropped", File: "policy.go",
		Edits: []mutation.Edit{{Old: `"0.0.0.0/8", "10.0.0.0/8",`, New: `"0.0.0.0/8",`}},
		Kills: "TestNonPublicAgreesWithEgress|TestEnvDirAndDestroy"},
	{Name: "stdin write accepted", File: "process.go",
		Edits: []mutation.Edit{{Old: `	return 0, checkfu.Refuse(CodeStdinUnsupported, "vercel: Vercel Sandbox commands take no stdin")`, New: `	return 0, nil`}},
		Kills: "TestNoStdin"},
	{Name: "stderr merged", File: "process.go",
		Edits: []mutation.Edit{{Old: `			if stream == "stderr" {
				w = errW
			}`, New: ``}},
		Kills: "TestStreamsAndExitCodes"},
	{Name: "one live process (shared Slot)", File: "../internal/vendorkit/slot.go",
		Edits: []mutation.Edit{{Old: `	case s.live != zero:`, New: `	case false:`}},
		Kills: "TestKillAndOneLiveProcess"},
	{Name: "killed status", File: "process.go",
		Edits: []mutation.Edit{{Old: `		return 137, nil`, New: `		return 0, nil`}},
		Kills: "TestKillAndOneLiveProcess"},
	{Name: "review2: command id not a vendor ID", File: "process.go",
		Edits: []mutation.Edit{{Old: `if !vendorkit.PathSafeID(id, "") {`, New: `if id == "" {`}},
		Kills: "TestCommandIDIsAVendorID"},
	{Name: "rt: exit code shown raw", File: "process.go",
		Edits: []mutation.Edit{{Old: `exit code %s", checkfu.Quote(fmt.Sprint(v)))`, New: `exit code %s", fmt.Sprint(v))`}},
		Kills: "TestExitCodeIsQuoted"},
	{Name: "rt: first line waited for past the context", File: "process.go",
		Edits: []mutation.Edit{{Old: `	case <-ctx.Done():
		resp.Body.Close()
		<-got
		err = context.Cause(ctx)
`, New: ``}},
		Kills: "TestOpenProcessHonoursItsContext"},
	{Name: "rt: kill unbounded", File: "process.go",
		Edits: []mutation.Edit{{Old: `ctx, cancel := context.WithTimeout(context.Background(), vendorkit.ControlTimeout)`, New: `ctx, cancel := context.WithCancel(context.Background())`}},
		Kills: "TestKillIsBounded"},
}
