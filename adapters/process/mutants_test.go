package process_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "accepts any network mode", File: "process.go",
		Edits: []mutation.Edit{{Old: "case spec.NetworkMode != NetworkMode:", New: "case false:"}}, Kills: "TestCreateRefusesWhatItCannotApply|TestAdaptertest"},
	{Name: "accepts limits it cannot apply", File: "process.go",
		Edits: []mutation.Edit{{Old: "case spec.Limits != adapters.Limits{}:", New: "case false:"}}, Kills: "TestCreateRefusesWhatItCannotApply"},
	{Name: "accepts a root image", File: "process.go",
		Edits: []mutation.Edit{{Old: `case spec.RootImage != "":`, New: "case false:"}}, Kills: "TestCreateRefusesWhatItCannotApply"},
	{Name: "inherits the Runner's environment", File: "process.go",
		Edits: []mutation.Edit{{Old: `return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir}, extra...)`, New: `return append(os.Environ(), extra...)`}}, Kills: "TestEnvironmentNotInherited"},
	{Name: "no reservation", File: "../internal/procset/procset.go",
		Edits: []mutation.Edit{{Old: "if err := s.slot.Acquire(); err != nil {", New: "if err := s.slot.Acquire(); false && err != nil {"}}, Kills: "TestAdaptertest"},
	{Name: "a failed start keeps the reservation", File: "../internal/procset/procset.go",
		Edits: []mutation.Edit{{Old: "\t\ts.slot.Release()\n\t\treturn nil, err\n", New: "\t\treturn nil, err\n"}}, Kills: "TestStartFailure"},
	{Name: "Kill reaches only the leader", File: "group_unix.go",
		Edits: []mutation.Edit{{Old: "syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)", New: "syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)"}}, Kills: "TestAdaptertest|TestKillReachesTheGroupWithoutNamespaces"},
	{Name: "signals reported as exit codes", File: "../internal/procset/procset.go",
		Edits: []mutation.Edit{{Old: "return 128 + s, nil", New: "return s - s, nil"}}, Kills: "TestAdaptertest"},
	{Name: "Destroy keeps the directory when its context ends", File: "process.go",
		Edits: []mutation.Edit{{Old: "\tif !first {\n\t\treturn err\n\t}\n\treturn errors.Join(err, removeDir(i.dir))", New: "\tif !first || err != nil {\n\t\treturn err\n\t}\n\treturn errors.Join(err, removeDir(i.dir))"}}, Kills: "TestDestroyRemovesTheDirectoryWhenItsContextEnds"},
	{Name: "Destroy keeps the directory", File: "process.go",
		Edits: []mutation.Edit{{Old: "func removeDir(dir string) error { return os.RemoveAll(dir) }", New: "func removeDir(dir string) error { return nil }"}}, Kills: "TestDestroyRemovesTheDirectory"},
	{Name: "pipes stay open at EOF", File: "../internal/procset/procset.go",
		Edits: []mutation.Edit{{Old: "\t\te.eof = true\n\t\te.f.Close()\n", New: "\t\te.eof = true\n"}}, Kills: "TestNoDescriptorLeak"},
	{Name: "no PID namespace: a child outlives the process", File: "tree_linux.go",
		Edits: []mutation.Edit{{Old: "if noNamespaces.Load() {", New: "if true {"}}, Kills: "TestNothingOutlivesTheProcess"},
}
