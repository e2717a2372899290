package adaptertest

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/checkfu/checkfu/adapters"
)

// How the suite honours declared gaps (adapters.Gaps): a part of a
// subtest that needs a property the provider declares missing is either
// adapted (the same property of the contract tried another way) or
// skipped, logged with the gap's name; every other part runs as for a
// provider with no gap. DeclaredGaps then checks that each declared gap
// is real where that is cheap to see.

// lineEnd returns the line end output checks use and its form inside a
// printf format: a newline when output is line-framed, nothing
// otherwise (so that a provider with the full contract is shown to
// deliver a partial last line exactly).
func lineEnd(g adapters.Gaps) (want, script string) {
	if g.LineFramed {
		return "\n", `\n`
	}
	return "", ""
}

// skipPart logs that part of a subtest does not run, and the declared
// gap that is why.
func skipPart(t tester, part, gap string) {
	t.Helper()
	t.Logf("not tried: %s (declared gap %s)", part, gap)
}

// stdinGap names the declared stdin gap: NoStdin or StdinNoEOF.
func stdinGap(g adapters.Gaps) string {
	if g.NoStdin {
		return "NoStdin"
	}
	return "StdinNoEOF"
}

// gapNames lists the gaps g declares.
func gapNames(g adapters.Gaps) string {
	var n []string
	for _, x := range []struct {
		on   bool
		name string
	}{{g.NoStdin, "NoStdin"}, {g.StdinNoEOF, "StdinNoEOF"}, {g.LineFramed, "LineFramed"}, {g.TextOnly, "TextOnly"}, {g.KillLeaderOnly, "KillLeaderOnly"}} {
		if x.on {
			n = append(n, x.name)
		}
	}
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}

// sleeper is a script that lives until it is killed. Under
// KillLeaderOnly the shell execs sleep, so that the process Kill
// reaches is the sleeper itself.
func sleeper(g adapters.Gaps) string {
	if g.KillLeaderOnly {
		return "exec sleep 60"
	}
	return "sleep 60"
}

// hold opens a process that holds the instance's reservation until it
// is collected with stdin in, and then prints want and exits 0. With
// stdin it is cat (one read line when stdin cannot end); with no stdin
// it sleeps a second before printing, time in which the caller tries a
// second open at once (and its output, unread, keeps the reservation).
func (s *suite) hold(t tester, inst adapters.Instance, g adapters.Gaps, tag string) (proc adapters.Process, in []byte, want string) {
	t.Helper()
	e, es := lineEnd(g)
	script, in, want := "cat", []byte(tag), tag
	switch {
	case g.NoStdin:
		script, in, want = "sleep 1; printf '%s"+es+"' "+shellQuote(tag), nil, tag+e
	case g.StdinNoEOF:
		script, in, want = `read -r l; printf '%s\n' "$l"`, []byte(tag+"\n"), tag+"\n"
	case g.LineFramed:
		in, want = []byte(tag+"\n"), tag+"\n"
	}
	return s.open(t, inst, adapters.ProcessSpec{Argv: s.sh(script)}), in, want
}

func shellQuote(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }

// payload returns n bytes to pass through a process: every byte value
// ([data]) unless the provider is TextOnly ([textData]), and ending in a
// newline when it is LineFramed.
func payload(seed uint64, n int, g adapters.Gaps) []byte {
	if g.TextOnly {
		return textData(seed, n)
	}
	b := data(seed, n)
	if g.LineFramed {
		b = append(b, '\n')
	}
	return b
}

// textData returns at least n bytes of lines, each 63 letters and
// digits and a newline (no blank, so read -r keeps a line whole).
func textData(seed uint64, n int) []byte {
	const alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewPCG(seed, 0x7e47))
	b := make([]byte, 0, n+64)
	for len(b) < n {
		for range 63 {
			b = append(b, alpha[r.IntN(len(alpha))])
		}
		b = append(b, '\n')
	}
	return b
}

const genLine = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ."

// generator is a script printing n numbered lines, redirected by redir;
// generated is what it prints. It makes megabytes of output inside the
// instance for a provider whose stdin cannot carry them in.
func generator(n int, redir string) string {
	return "i=0; while [ $i -lt " + strconv.Itoa(n) + " ]; do printf '%07d " + genLine + `\n' $i` + redir + "; i=$((i+1)); done"
}

func generated(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "%07d %s\n", i, genLine)
	}
	return b.Bytes()
}

// A lockedBuffer collects a stream in the background.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.b = append(l.b, p...)
	l.mu.Unlock()
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// collectIn copies r into a lockedBuffer in the background; the copy
// ends when the stream does (at the latest when the instance is
// destroyed).
func collectIn(r io.Reader) *lockedBuffer {
	var l lockedBuffer
	go io.Copy(&l, r)
	return &l
}

// quiet is how long DeclaredGaps watches for what a declared gap says
// cannot happen. A provider slower than this can hide a false
// declaration; it can never make a true one fail.
const quiet = 300 * time.Millisecond

// testDeclaredGaps checks the declaration is consistent, and that each
// declared gap is real where that can be seen cheaply:
//
//   - NoStdin: a write to stdin does not reach cat, which reads end of
//     input at once;
//   - StdinNoEOF: after a line and Close, cat echoes the line and, for
//     a while, does not end;
//   - LineFramed: a partial line does not arrive, for a while, while its
//     process lives;
//   - TextOnly: the 256 byte values printed to stdout do not come back
//     exactly;
//   - KillLeaderOnly: a child, not holding stdout, outlives Kill.
//
// The "for a while" checks watch for [quiet]; they can miss a false
// declaration on a slow provider but never fail a true one.
func testDeclaredGaps(t tester, s *suite, p adapters.Provider) {
	g := p.Describe().Gaps
	if g == (adapters.Gaps{}) {
		t.Log("no gap declared")
		return
	}
	t.Logf("declared gaps: %s", gapNames(g))
	if g.NoStdin && g.StdinNoEOF {
		t.Fatal("declared both NoStdin and StdinNoEOF: no stdin has no end to lack")
	}
	e, es := lineEnd(g)
	inst, _ := s.create(t, p, "")
	if g.NoStdin {
		proc := s.open(t, inst, adapters.ProcessSpec{Argv: s.sh("cat; printf 'done" + es + "'")})
		s.within(t, "a write to a stdin declared missing", func() { proc.Stdin().Write([]byte("stdin reached\n")) })
		if r := s.collect(t, proc, nil); string(r.stdout) != "done"+e {
			t.Errorf("declared NoStdin, but cat printed %q (want %q): stdin reached the process, or it did not read end of input", r.stdout, "done"+e)
		}
	}
	if g.StdinNoEOF {
		proc := s.open(t, inst, adapters.ProcessSpec{Argv: s.sh("cat; printf 'done\\n'")})
		out := collectIn(proc.Stdout())
		go io.Copy(io.Discard, proc.Stderr())
		s.within(t, "writing a stdin line", func() { proc.Stdin().Write([]byte("x\n")); proc.Stdin().Close() })
		deadline := time.Now().Add(s.timeout)
		for !strings.HasPrefix(out.String(), "x\n") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(quiet)
		if got := out.String(); !strings.HasPrefix(got, "x\n") || strings.Contains(got, "done") {
			t.Errorf("declared StdinNoEOF, but after a line and Close cat printed %q (want \"x\\n\" and no end)", got)
		}
		proc.Kill()
		s.within(t, "Wait after Kill", func() { proc.Wait() })
	}
	if g.LineFramed {
		proc := s.open(t, inst, adapters.ProcessSpec{Argv: s.sh("printf partial; exec sleep 60")})
		out := collectIn(proc.Stdout())
		go io.Copy(io.Discard, proc.Stderr())
		time.Sleep(quiet)
		if got := out.String(); got != "" {
			t.Errorf("declared LineFramed, but a partial line arrived while its process lived: %q", got)
		}
		proc.Kill()
		s.within(t, "Wait after Kill", func() { proc.Wait() })
	}
	if g.TextOnly {
		var script, want strings.Builder
		script.WriteString("printf '")
		for i := range 256 {
			fmt.Fprintf(&script, `\%03o`, i)
			want.WriteByte(byte(i))
		}
		script.WriteString(es + "'")
		if r := s.run(t, inst, script.String(), nil); string(r.stdout) == want.String()+e {
			t.Error("declared TextOnly, but the 256 byte values crossed stdout exactly")
		}
	}
	if g.KillLeaderOnly {
		proc := s.open(t, inst, adapters.ProcessSpec{Argv: s.sh("sleep 60 >/dev/null 2>&1 & printf '%s\\n' $!; wait")})
		go io.Copy(io.Discard, proc.Stderr())
		var line []byte
		s.within(t, "reading the child's pid", func() {
			b := make([]byte, 1)
			for len(line) < 20 {
				if n, err := proc.Stdout().Read(b); n == 0 && err != nil || b[0] == '\n' {
					break
				}
				line = append(line, b[0])
			}
		})
		pid, err := strconv.Atoi(string(line))
		if err != nil {
			t.Fatalf("the child's pid: %q", line)
		}
		proc.Kill()
		s.within(t, "stdout EOF after Kill", func() { io.Copy(io.Discard, proc.Stdout()) })
		s.within(t, "Wait after Kill", func() { proc.Wait() })
		// Alive: signalable and, where /proc shows it, not a zombie.
		ps := strconv.Itoa(pid)
		alive := "if kill -0 " + ps + " 2>/dev/null; then st=$(cat /proc/" + ps + "/stat 2>/dev/null); case \"$st\" in *') Z '*) ;; *) printf 'alive" + es + "';; esac; fi; kill -9 " + ps + " 2>/dev/null; exit 0"
		if r := s.run(t, inst, alive, nil); string(r.stdout) != "alive"+e {
			t.Errorf("declared KillLeaderOnly, but Kill ended the child too (stdout %q)", r.stdout)
		}
	}
}
