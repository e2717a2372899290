package adaptertest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/checkfu/checkfu/adapters"
)

// Canaries: what the host holds must not reach an instance unless the
// spec hands it over. The suite plants a marked canary of each kind
// outside the spec, then looks for the marks from inside an instance:
//
//   - environment: a variable in the host's own environment (so an
//     adapter that starts from os.Environ() is caught);
//   - files: a file in the host's temporary directory, and one left by
//     another instance in its working directory, HOME and TMPDIR (so an
//     adapter that runs processes in a host or shared directory is
//     caught);
//   - argv: the process's arguments must be exactly the spec's (so an
//     adapter that appends the host's own arguments, or an earlier
//     process's, is caught);
//   - descriptors: a host file held open under a marked name (so an
//     adapter that hands the host's open files to the process is caught).
//
// A canary is proved absent only where the process can look: the
// environment it was given, /proc/self/fd, its working directory, HOME
// and TMPDIR. A provider that isolates nothing (package process) can
// still be read through the host's /proc or absolute paths; that is no
// canary's concern, its capability declares no isolation.

// canaryMarks are the prefixes of the four canaries, one per kind, so
// a finding names the kind that leaked.
const (
	canaryEnv  = "cfenv"
	canaryFile = "cffile"
	canaryArgv = "cfargv"
	canaryFD   = "cffd"
)

func canaryToken() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// canaryScript prints what the process can see of each canary: its
// arguments, its exported environment, its descriptors, and which of
// the named files exist in its working directory, HOME and TMPDIR.
func canaryScript(files ...string) string {
	var b strings.Builder
	b.WriteString(`printf 'argv:'; printf ' %s' "$0" "$@"; printf '\n'; export -p; ls -l /proc/self/fd/ 2>/dev/null; `)
	b.WriteString(`for d in . "$HOME" "${TMPDIR:-/tmp}"; do for f in`)
	for _, f := range files {
		b.WriteString(" " + f)
	}
	b.WriteString(`; do [ -e "$d/$f" ] && printf 'file %s\n' "$d/$f"; done; done; exit 0`)
	return b.String()
}

func testCanaries(t tester, s *suite, p adapters.Provider) {
	token := canaryToken()
	envMark, fileMark, argvMark, fdMark := canaryEnv+token, canaryFile+token, canaryArgv+token, canaryFD+token

	// The host's environment.
	name := "CHECKFU_ADAPTERTEST_CANARY_" + token
	os.Setenv(name, envMark)
	t.Cleanup(func() { os.Unsetenv(name) })
	// A file in the host's temporary directory, and a descriptor of
	// another held open by the host while the instance runs.
	hostFile := filepath.Join(os.TempDir(), fileMark+"-host")
	if err := os.WriteFile(hostFile, []byte(fileMark), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(hostFile) })
	fdPath := filepath.Join(t.TempDir(), fdMark)
	if err := os.WriteFile(fdPath, []byte(fdMark), 0o600); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(fdPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })

	// Another instance leaves files and an argument behind. Writes may
	// fail where the file system is read-only; then nothing is left.
	other, _ := s.create(t, p, "")
	left := fileMark + "-left"
	t.Cleanup(func() { removeLeft(left) })
	s.collect(t, s.open(t, other, adapters.ProcessSpec{Argv: append(s.sh(
		`for d in . "$HOME" "${TMPDIR:-/tmp}"; do printf x > "$d/`+left+`"; done 2>/dev/null; exit 0`), "a0", argvMark)}), nil)

	inst, _ := s.create(t, p, "")
	// The same instance too: an earlier process's argument.
	s.collect(t, s.open(t, inst, adapters.ProcessSpec{Argv: append(s.sh("exit 0"), "a0", argvMark)}), nil)
	r := s.collect(t, s.open(t, inst, adapters.ProcessSpec{Argv: append(s.sh(canaryScript(fileMark+"-host", left)), "x0", "x1")}), nil)
	out := string(r.stdout)
	if r.status != 0 {
		t.Fatalf("the canary script: status %d, stdout %q, stderr %q", r.status, out, r.stderr)
	}
	for _, c := range []struct{ kind, mark string }{
		{"the host's environment", envMark},
		{"a host or another instance's file", fileMark},
		{"another process's argument", argvMark},
		{"a host descriptor", fdMark},
	} {
		if strings.Contains(out, c.mark) || strings.Contains(string(r.stderr), c.mark) {
			t.Errorf("canary: %s reached the instance:\n%s", c.kind, canaryLines(out, c.mark))
		}
	}
	if first, _, _ := strings.Cut(out, "\n"); first != "argv: x0 x1" {
		t.Errorf("canary: the process's arguments are %q, want exactly the spec's %q", first, "argv: x0 x1")
	}
}

// removeLeft removes the file named left from each host directory an
// instance that isolates nothing may have written it to: the host's
// temporary directory, /tmp, HOME and the working directory. The name
// holds the canary's random token, so nothing else is touched, and the
// suite leaves nothing behind on the host it ran on.
func removeLeft(left string) {
	dirs := []string{os.TempDir(), "/tmp", "."}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, home)
	}
	for _, d := range dirs {
		os.Remove(filepath.Join(d, left))
	}
}

// canaryLines returns the lines of out that hold mark.
func canaryLines(out, mark string) string {
	var l []string
	for line := range strings.Lines(out) {
		if strings.Contains(line, mark) {
			l = append(l, strings.TrimRight(line, "\n"))
		}
	}
	return strings.Join(l, "\n")
}
