//go:build linux

package initstage_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete one check of the stage's own decoding each; the locks
// the stage applies are the jail package's mutants (its tests see them
// in a real jail), but for the filter's architecture check: a host
// whose kernel refuses i386 calls itself kills them before the filter
// does, so that check is held here, on the filter itself.
var mutants = []mutation.Mutant{
	{Name: "another architecture's calls allowed", File: "seccomp_linux.go",
		Edits: []mutation.Edit{{Old: "bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},", New: "bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1, SkipFalse: 1},"}}, Kills: "TestFilterKillsOtherArchitectures"},
	{Name: "a descriptor that is no cgroup file joined", File: "stage_linux.go",
		Edits: []mutation.Edit{{Old: "\t\tif err := isCgroupFile(fd); err != nil {\n\t\t\treturn err\n\t\t}\n", New: "\t\t_ = fd\n"}}, Kills: "TestJoinCgroupsRefusesOtherFiles"},
}
