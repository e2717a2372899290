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
	{Name: "no sweep at the first Create", File: "process.go",
		Edits: []mutation.Edit{{Old: "\tsweepOnce.Do(sweepDirs)\n", New: ""}}, Kills: "TestSweepRemovesAKilledOwnersDirectory"},
	{Name: "the directory does not name its owner", File: "process.go",
		Edits: []mutation.Edit{{Old: `os.MkdirTemp("", dirPrefix+deadowner.Self()+"-")`, New: `os.MkdirTemp("", dirPrefix+deadowner.Self())`}}, Kills: "TestSweepRemovesAKilledOwnersDirectory"},
	{Name: "the sweep takes a live owner's directory", File: "../internal/deadowner/orphan.go",
		Edits: []mutation.Edit{{Old: "return ok && dashed && Dead(owner)", New: "return ok && dashed && (Dead(owner) || owner != \"\")"}}, Kills: "TestSweepRemovesAKilledOwnersDirectory"},
	{Name: "the sweep takes an owner of another PID namespace", File: "../internal/deadowner/deadowner.go",
		Edits: []mutation.Edit{{Old: "if !ok || !parsed || owner != ns {", New: "if !ok || !parsed || owner != ns && false {"}}, Kills: "TestSweepKeepsAnotherNamespacesOwner"},
	{Name: "the sweep follows a link at a swept name", File: "sweep_unix.go",
		Edits: []mutation.Edit{{Old: "fd, err := unix.Openat(tfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)", New: "fd, err := unix.Openat(tfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)"}}, Kills: "TestSweepNeverLeavesTheDirectory"},
	{Name: "the sweep descends through links", File: "sweep_unix.go",
		Edits: []mutation.Edit{{Old: "if !e.IsDir() {", New: "if e.Type().IsRegular() {"}, {Old: "sub, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)", New: "sub, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)"}}, Kills: "TestSweepNeverLeavesTheDirectory"},
	{Name: "the sweep takes a directory others may write in", File: "sweep_unix.go",
		Edits: []mutation.Edit{{Old: " || st.Mode&0o022 != 0 {", New: " {"}}, Kills: "TestSweepKeepsWhatIsNotOurs"},
	{Name: "the sweep removes by name after a swap", File: "sweep_unix.go",
		Edits: []mutation.Edit{{Old: "\tif !emptyDir(d, uint64(st.Dev), 1) {", New: "\tif os.RemoveAll(dir) != nil || !emptyDir(d, uint64(st.Dev), 1) {"}}, Kills: "TestSweepRace"},
	{Name: "the sweep has no depth bound", File: "sweep_unix.go",
		Edits: []mutation.Edit{{Old: "if depth >= maxSweepDepth {", New: "if false {"}}, Kills: "TestSweepDepth"},
}
