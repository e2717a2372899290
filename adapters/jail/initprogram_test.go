//go:build linux

package jail_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
)

// fakeStageName is the file name under which the test binary acts as an
// init program of another protocol revision (fakeStageMain).
const fakeStageName = "checkfu-fake-init"

// fakeStageMain runs when a copy of the test binary named fakeStageName
// is started as an init stage: it answers the trial start with a
// protocol this package does not speak.
func fakeStageMain() {
	if len(os.Args) < 2 || os.Args[1] != jail.InitArg {
		return
	}
	if exe, _ := os.Readlink("/proc/self/exe"); filepath.Base(exe) != fakeStageName {
		return
	}
	buf := make([]byte, 4096)
	unix.Read(3, buf)
	unix.Write(3, []byte("Rcheckfu-jail-init/0"))
	os.Exit(0)
}

// copyProgram copies src to a new file name in a fresh directory, with
// mode perm.
func copyProgram(t *testing.T, src, name string, perm os.FileMode) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(dst, b, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dst, perm); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestNewRefusesUntrustedInitProgram gives New init programs it must
// not trust, one flaw each, and the built program as the control.
func TestNewRefusesUntrustedInitProgram(t *testing.T) {
	prog := mustInitProgram(t)
	good := copyProgram(t, prog, "checkfu-jail-init", 0o755)
	if _, err := jail.New(jail.Config{InitProgram: good}); err != nil {
		if os.Getenv("CI") != "true" && errors.Is(err, jail.CodeKernelUnsupported) {
			t.Skip(err)
		}
		t.Fatalf("control: New with the built program: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	otherOwner := copyProgram(t, prog, "checkfu-jail-init", 0o755)
	if os.Geteuid() == 0 {
		if err := os.Chown(otherOwner, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	} else {
		otherOwner = "/" // skipped below
	}
	noexecDir := t.TempDir() // a tmpfs mounted noexec over it, when root
	noexecProg := "/"
	if os.Geteuid() == 0 {
		if err := unix.Mount("tmpfs", noexecDir, "tmpfs", unix.MS_NOEXEC, "size=16m"); err != nil {
			t.Fatal(err)
		}
		defer unix.Unmount(noexecDir, unix.MNT_DETACH)
		b, err := os.ReadFile(prog)
		if err != nil {
			t.Fatal(err)
		}
		noexecProg = filepath.Join(noexecDir, "checkfu-jail-init")
		if err := os.WriteFile(noexecProg, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ name, path string }{
		{"a relative path", "checkfu-jail-init"},
		{"a missing file", filepath.Join(t.TempDir(), "none")},
		{"a directory", t.TempDir()},
		{"group-writable", copyProgram(t, prog, "checkfu-jail-init", 0o775)},
		{"writable by others", copyProgram(t, prog, "checkfu-jail-init", 0o757)},
		{"set-uid", copyProgram(t, prog, "checkfu-jail-init", os.ModeSetuid|0o755)},
		{"not executable by the jail's identity", copyProgram(t, prog, "checkfu-jail-init", 0o750)},
		{"owned by another user", otherOwner},
		{"on a noexec mount", noexecProg},
		{"a program that is no init stage", "/bin/true"},
		{"another protocol revision", copyProgram(t, exe, fakeStageName, 0o755)},
	} {
		if c.path == "/" {
			continue
		}
		if _, err := jail.New(jail.Config{InitProgram: c.path}); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s: New = %v, want %s", c.name, err, checkfu.CodeConfigInvalid)
		}
	}
}

// TestInitProgramSwappedAfterNew replaces the init program at its path
// once New has checked it: every jail still runs the file New opened,
// never what is at the path now.
func TestInitProgramSwappedAfterNew(t *testing.T) {
	path := copyProgram(t, mustInitProgram(t), "checkfu-jail-init", 0o755)
	// The jail's identity may search the directory, so that an exec by
	// path would reach the impostor rather than fail on the way.
	for _, d := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := newProvider(t, jail.Config{InitProgram: path})
	impostor := copyProgram(t, "/bin/true", "impostor", 0o755)
	if err := os.Rename(impostor, path); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	inst, err := jail.CreateForTest(t, p, p.Spec("swapped", testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/echo", "jailed"}})
	if err != nil {
		t.Fatalf("OpenProcess after the swap: %v", err)
	}
	out, _ := io.ReadAll(proc.Stdout())
	if code, _ := proc.Wait(); code != 0 || string(out) != "jailed\n" {
		t.Errorf("the workload: exit %d, %q; want 0, \"jailed\\n\"", code, out)
	}
}
