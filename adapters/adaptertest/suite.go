package adaptertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
)

// A Harness tells the suite how to make and drive a provider.
type Harness struct {
	// New returns a fresh provider. Required. The suite calls it once
	// per subtest.
	New func(t testing.TB) adapters.Provider
	// Spec returns the instance spec the Runner would ask for: ID id and
	// network mode mode (one of the capability's network modes), with the
	// image, platform, profile digest and limits the provider can apply.
	// Required.
	Spec func(t testing.TB, id, mode string) adapters.InstanceSpec
	// Shell is the argv prefix that runs a POSIX shell script inside an
	// instance: the suite runs Shell followed by one script argument
	// ("/bin/sh", "-c"). Required. The scripts use sh, cat, printf,
	// sleep and exit.
	Shell []string
	// Probe is the argv prefix of [RunProbe] inside an instance. It is
	// required when the capability declares the none network mode, which
	// the suite then tries to break.
	Probe []string
	// Timeout bounds each blocking step; zero means 30 s. A step that
	// outlives it fails the subtest rather than hanging the suite.
	Timeout time.Duration
}

// TestProvider runs the contract tests against the provider h makes, as
// named subtests: Describe, Lifecycle, OneLiveProcess, Stdio, ExitCodes,
// Kill, Sequence, Evidence, CapabilityHonesty, Wire, DeclaredGaps and
// Canaries.
// Each subtest gets a fresh provider; Sequence drives ONE instance
// through a long sequence of operations.
//
// Declared gaps (adapters.Gaps) are honoured, and only those: a part of
// a subtest that needs a property the provider declares missing is
// adapted or skipped, logged with the gap's name, and everything else
// runs as for the full contract. Without stdin (NoStdin, StdinNoEOF)
// the one-live-process holder is a short sleep or a one-line read, and
// megabytes of output are generated in the instance instead of echoed;
// with StdinNoEOF, stdin lines are echoed up to a terminating line;
// with LineFramed every output check ends its lines with a newline;
// with TextOnly the data is text; with KillLeaderOnly the process Kill
// must end is an exec'd sleep, and a child holding stdout is not tried.
// DeclaredGaps checks the declaration is consistent and each gap real
// where that is cheap to see (see testDeclaredGaps).
//
// What it proves, for the provider under test: its Description passes
// adapters.Check and is stable; instances keep their ID, refuse an
// undeclared network mode, are destroyed idempotently and refuse to
// open afterwards, and Destroy ends a live process; a second live
// process is refused with process_already_open without disturbing the
// first, and the reservation is released once the first is reaped or
// killed; stdout and stderr are separate; binary and multi-megabyte data
// cross stdin and stdout intact and in order; stdin close reaches the
// process as EOF; exit codes 0 to 255 are reported exactly; Kill ends a
// process and its children; Env reaches the process, and nothing of the
// host's beyond the spec does: canaries planted in the host's
// environment, its temporary directory, another instance's directories,
// another process's arguments and the host's open descriptors are absent
// from inside an instance, whose argv is exactly the spec's; every process's
// evidence passes adapters.MatchEvidence against the Runner's state,
// with the assurance its placement allows, placement judged by what the
// instance is (a wired instance is remote, whatever is declared); declared optional members are
// implemented; a provider declaring the none network mode gives a
// process that cannot reach a live listener on the host's loopback and
// has no non-loopback interface; and, for a remote provider, the wire's
// credit window, reservation and resume (acp/wire/wiretest) and a stdout
// stream delivered exactly once across a connection dropped mid-stream.
//
// What it cannot prove: any enforcement axis (filesystem, privileges,
// syscalls, resources, lifetime) other than network none, nor the
// allowlist mode, nor limits being applied (only reported); isolation
// from a host the instance does not share (a network-none container
// reaches no host loopback anyway, so there the interface check carries
// the weight); behaviour under load or real network faults; and
// anything about a remote provider's physical isolation: over a wire the
// evidence check is identity_only.
//
// What it is proved to catch: the package's own tests run the suite,
// recorded, against plausible broken providers and assert that the named
// subtests reject each (brokenProviders in broken_test.go): one that
// allows two live processes, one that merges stderr into stdout, one
// whose exit code is always 0, one that reports the previous process's
// exit status, one that lies about network mode none, one whose evidence
// names another image, one whose evidence is that of the first instance
// it made, one that keeps the reservation after a kill, one that drops
// stdout past 1 MiB, one whose Kill only closes stdin, one that declares
// list_dir without implementing it, one that starts from the host's
// environment (Env = append(os.Environ(), spec.Env...)), one that hands
// the host's open files to the process, one that runs processes in the
// host's temporary directory, one that appends the host's own
// arguments, a remote provider whose journal is too small to survive a
// drop (output_truncated), and a remote provider (its instances wired)
// that declares itself in_process, which placement judged by what the
// instance is rejects; and, with declared
// gaps (gapProviders), one declaring no gap whose stdin never ends, one
// declaring LineFramed that merges stderr into stdout, one declaring
// NoStdin that drops stdout past 1 MiB, one declaring KillLeaderOnly
// whose Kill only closes stdin, and one each declaring NoStdin,
// StdinNoEOF, LineFramed, TextOnly or KillLeaderOnly it does not have. Package process's
// mutants add a Kill that reaches only the group leader, a provider
// without a reservation, and signals reported as exit code 0.
func TestProvider(t *testing.T, h Harness) {
	runSuite(realT{t}, h)
}

func runSuite(t tester, h Harness) {
	if h.New == nil || h.Spec == nil || len(h.Shell) == 0 {
		t.Fatal("adaptertest: a Harness needs New, Spec and Shell")
	}
	s := &suite{h: h, timeout: h.Timeout}
	if s.timeout == 0 {
		s.timeout = 30 * time.Second
	}
	for _, sub := range []struct {
		name string
		f    func(tester, *suite, adapters.Provider)
	}{
		{"Describe", testDescribe},
		{"Lifecycle", testLifecycle},
		{"OneLiveProcess", testOneLiveProcess},
		{"Stdio", testStdio},
		{"ExitCodes", testExitCodes},
		{"Kill", testKill},
		{"Sequence", testSequence},
		{"Evidence", testEvidence},
		{"CapabilityHonesty", testHonesty},
		{"Wire", testWire},
		{"DeclaredGaps", testDeclaredGaps},
		{"Canaries", testCanaries},
	} {
		t.run(sub.name, func(t tester) {
			p := h.New(t)
			if p == nil {
				t.Fatal("adaptertest: Harness.New returned nil")
			}
			sub.f(t, s, p)
		})
	}
}

type suite struct {
	h       Harness
	timeout time.Duration
}

var instanceSeq atomic.Uint64

// create makes an instance in the provider's first network mode (or
// mode), destroyed when the subtest ends.
func (s *suite) create(t tester, p adapters.Provider, mode string) (adapters.Instance, adapters.InstanceSpec) {
	t.Helper()
	if mode == "" {
		modes := p.Describe().Capability.NetworkModes
		if len(modes) == 0 {
			t.Fatal("adaptertest: the capability declares no network mode")
		}
		mode = modes[0]
	}
	id := "adaptertest-" + strconv.FormatUint(instanceSeq.Add(1), 10)
	spec := s.h.Spec(t, id, mode)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	inst, err := p.Create(ctx, spec)
	if err != nil {
		t.Fatalf("Create(%s, mode %s): %v", id, mode, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		inst.Destroy(ctx)
	})
	return inst, spec
}

func (s *suite) sh(script string) []string {
	return append(slices.Clone(s.h.Shell), script)
}

// open starts script in inst.
func (s *suite) open(t tester, inst adapters.Instance, spec adapters.ProcessSpec) adapters.Process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	p, err := inst.OpenProcess(ctx, spec)
	if err != nil {
		t.Fatalf("OpenProcess(%q): %v", spec.Argv, err)
	}
	t.Cleanup(func() { p.Kill() })
	return p
}

// A result is everything a process produced.
type result struct {
	stdout, stderr []byte
	status         int
	err            error
}

// collect writes stdin to p and closes it, reads stdout and stderr to
// EOF, and waits; within the suite's timeout.
func (s *suite) collect(t tester, p adapters.Process, stdin []byte) result {
	t.Helper()
	done := make(chan result, 1)
	go func() {
		var r result
		go func() {
			if len(stdin) > 0 {
				p.Stdin().Write(stdin)
			}
			p.Stdin().Close()
		}()
		errc := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(p.Stderr())
			errc <- b
		}()
		r.stdout, _ = io.ReadAll(p.Stdout())
		r.stderr = <-errc
		r.status, r.err = p.Wait()
		done <- r
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(s.timeout):
		t.Fatalf("process did not end within %v", s.timeout)
		return result{}
	}
}

// run opens argv in inst and collects it.
func (s *suite) run(t tester, inst adapters.Instance, script string, stdin []byte) result {
	t.Helper()
	return s.collect(t, s.open(t, inst, adapters.ProcessSpec{Argv: s.sh(script)}), stdin)
}

// within runs f and fails the test when it outlives the timeout. f
// must not use t: after a timeout it may still be running when the test
// has ended.
func (s *suite) within(t tester, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(s.timeout):
		t.Fatalf("%s did not return within %v", what, s.timeout)
	}
}

func testDescribe(t tester, s *suite, p adapters.Provider) {
	d := p.Describe()
	if err := adapters.Check(d); err != nil {
		t.Fatalf("adapters.Check(Describe()) = %v", err)
	}
	if d2 := p.Describe(); !reflect.DeepEqual(d, d2) {
		t.Errorf("Describe is not stable: %+v then %+v", d, d2)
	}
	if len(d.Capability.Platforms) == 0 {
		t.Error("the capability declares no platform")
	}
	if g := adapters.Grade(d, nil); g == checkfu.SecurityBoundary {
		t.Errorf("Grade without a receipt = %v", g)
	}
}

func testLifecycle(t tester, s *suite, p adapters.Provider) {
	inst, spec := s.create(t, p, "")
	if inst.ID() != spec.ID {
		t.Errorf("ID() = %q, want %q", inst.ID(), spec.ID)
	}
	if r := s.run(t, inst, "exit 0", nil); r.status != 0 || r.err != nil {
		t.Errorf("exit 0: status %d, %v", r.status, r.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	bad := s.h.Spec(t, "adaptertest-undeclared-mode", "checkfu-undeclared-mode")
	if i, err := p.Create(ctx, bad); !errors.Is(err, adapters.CodeSpecUnsupported) {
		if i != nil {
			i.Destroy(ctx)
		}
		t.Errorf("Create with an undeclared network mode = %v, want %s", err, adapters.CodeSpecUnsupported)
	}
	noID := spec
	noID.ID = ""
	if i, err := p.Create(ctx, noID); err == nil {
		i.Destroy(ctx)
		t.Error("Create with an empty ID succeeded")
	}

	live := s.open(t, inst, adapters.ProcessSpec{Argv: s.sh("sleep 60")})
	// f must not touch t: after a timeout it runs on past the test.
	var derr error
	s.within(t, "Destroy with a live process", func() { derr = inst.Destroy(ctx) })
	if derr != nil {
		t.Errorf("Destroy: %v", derr)
	}
	s.within(t, "Wait after Destroy", func() { live.Wait() })
	if err := inst.Destroy(ctx); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
	if _, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: s.sh("exit 0")}); !errors.Is(err, adapters.CodeInstanceDestroyed) {
		t.Errorf("OpenProcess after Destroy = %v, want %s", err, adapters.CodeInstanceDestroyed)
	}
}

func testOneLiveProcess(t tester, s *suite, p adapters.Provider) {
	g := p.Describe().Gaps
	inst, _ := s.create(t, p, "")
	first, in, want := s.hold(t, inst, g, "ping")
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if second, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: s.sh("exit 0")}); !errors.Is(err, wire.CodeProcessAlreadyOpen) {
		if second != nil {
			second.Kill()
		}
		t.Fatalf("a second OpenProcess while one lives = %v, want %s", err, wire.CodeProcessAlreadyOpen)
	}
	if r := s.collect(t, first, in); string(r.stdout) != want || r.status != 0 {
		t.Errorf("the first process after a refused second: stdout %q status %d, want %q 0", r.stdout, r.status, want)
	}
	if r := s.run(t, inst, "exit 3", nil); r.status != 3 {
		t.Errorf("a process after the first was reaped: status %d, want 3", r.status)
	}
	k := s.open(t, inst, adapters.ProcessSpec{Argv: s.sh(sleeper(g))})
	k.Kill()
	s.within(t, "Wait after Kill", func() { k.Wait() })
	if r := s.run(t, inst, "exit 4", nil); r.status != 4 {
		t.Errorf("a process after a killed one was reaped: status %d, want 4", r.status)
	}
}

// data returns n deterministic bytes covering every byte value.
func data(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := range b {
		if i < 256 {
			b[i] = byte(i)
		} else {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

func testStdio(t tester, s *suite, p adapters.Provider) {
	g := p.Describe().Gaps
	e, es := lineEnd(g)
	inst, _ := s.create(t, p, "")
	r := s.run(t, inst, "printf 'out"+es+"'; printf 'err"+es+"' >&2", nil)
	if string(r.stdout) != "out"+e || string(r.stderr) != "err"+e {
		t.Errorf("stdout %q stderr %q, want %q and %q apart", r.stdout, r.stderr, "out"+e, "err"+e)
	}
	if g.NoStdin || g.StdinNoEOF {
		skipPart(t, "multi-megabyte stdin echoed by cat", stdinGap(g))
		// The output half still runs: megabytes generated in the instance.
		want := generated(40000)
		if r = s.run(t, inst, generator(40000, ""), nil); !bytes.Equal(r.stdout, want) {
			t.Errorf("%d generated bytes on stdout returned %d bytes (equal: false)", len(want), len(r.stdout))
		}
	} else {
		big := payload(1, 3<<20+17, g)
		r = s.run(t, inst, "cat", big)
		if !bytes.Equal(r.stdout, big) {
			t.Errorf("cat of %d bytes returned %d bytes (equal: false)", len(big), len(r.stdout))
		}
	}
	if g.StdinNoEOF {
		skipPart(t, "cat of empty stdin, and stdin close as EOF", "StdinNoEOF")
		// Lines still cross stdin in order, ended by a line, not by EOF.
		in := textData(4, 64<<10)
		if r = s.run(t, inst, `while read -r l && [ "$l" != END ]; do printf '%s\n' "$l"; done; printf 'done\n'`, append(slices.Clone(in), "END\n"...)); string(r.stdout) != string(in)+"done\n" {
			t.Errorf("%d bytes of stdin lines echoed as %d bytes (equal: false)", len(in), len(r.stdout))
		}
	} else {
		if r = s.run(t, inst, "cat", nil); len(r.stdout) != 0 || r.status != 0 {
			t.Errorf("cat of empty stdin: %q status %d", r.stdout, r.status)
		}
		in := []byte("x\x00y")
		switch {
		case g.NoStdin:
			in = nil // the process reads end of input at once
		case g.TextOnly:
			in = []byte("x y")
		}
		if g.LineFramed && in != nil {
			in = append(in, '\n')
		}
		if r = s.run(t, inst, "cat; printf 'done"+es+"'", in); string(r.stdout) != string(in)+"done"+e {
			t.Errorf("stdin close did not reach the process as EOF: %q", r.stdout)
		}
	}
	if g.NoStdin || g.StdinNoEOF {
		want := generated(500)
		if r = s.run(t, inst, generator(500, " >&2")+"; printf 'ok"+es+"'", nil); !bytes.Equal(r.stderr, want) || string(r.stdout) != "ok"+e {
			t.Errorf("%d generated bytes to stderr: got %d bytes, stdout %q", len(want), len(r.stderr), r.stdout)
		}
	} else {
		errBig := payload(2, 32<<10, g)
		if r = s.run(t, inst, "cat >&2; printf 'ok"+es+"'", errBig); !bytes.Equal(r.stderr, errBig) || string(r.stdout) != "ok"+e {
			t.Errorf("32 KiB to stderr: got %d bytes, stdout %q", len(r.stderr), r.stdout)
		}
	}
}

func testExitCodes(t tester, s *suite, p adapters.Provider) {
	inst, _ := s.create(t, p, "")
	for _, code := range []int{0, 1, 2, 7, 42, 125, 255} {
		if r := s.run(t, inst, "exit "+strconv.Itoa(code), nil); r.status != code || r.err != nil {
			t.Errorf("exit %d: status %d, %v", code, r.status, r.err)
		}
	}
}

func testKill(t tester, s *suite, p adapters.Provider) {
	g := p.Describe().Gaps
	e, es := lineEnd(g)
	inst, _ := s.create(t, p, "")
	script := "sleep 60 & printf 'ready" + es + "'; wait; printf after"
	if g.KillLeaderOnly {
		skipPart(t, "a child holding stdout open ended by Kill", "KillLeaderOnly")
		script = "printf 'ready" + es + "'; exec sleep 60; printf after"
	}
	proc := s.open(t, inst, adapters.ProcessSpec{Argv: s.sh(script)})
	buf := make([]byte, len("ready"+e))
	s.within(t, "reading ready", func() { io.ReadFull(proc.Stdout(), buf) })
	if string(buf) != "ready"+e {
		t.Fatalf("read %q, want %q", buf, "ready"+e)
	}
	if err := proc.Kill(); err != nil {
		t.Errorf("Kill: %v", err)
	}
	var rest []byte
	var status int
	var err error
	s.within(t, "stdout EOF after Kill (a child kept it open)", func() { rest, _ = io.ReadAll(proc.Stdout()) })
	s.within(t, "Wait after Kill", func() { status, err = proc.Wait() })
	if len(rest) != 0 {
		t.Errorf("after Kill the process still wrote %q", rest)
	}
	if status == 0 && err == nil {
		t.Error("a killed process reported exit status 0 and no error")
	}
	proc.Kill() // after reaping: must not panic or hang
	if r := s.run(t, inst, "exit 5", nil); r.status != 5 {
		t.Errorf("after a kill: status %d, want 5", r.status)
	}
}

func testSequence(t tester, s *suite, p adapters.Provider) {
	g := p.Describe().Gaps
	e, es := lineEnd(g)
	inst, spec := s.create(t, p, "")
	held := adapters.HeldFor(p.Describe(), spec)
	rnd := rand.New(rand.NewPCG(18, 18))
	loggedStdin := false
	for i := range 24 {
		op := rnd.IntN(6)
		tag := fmt.Sprintf("op %d (%d)", i, op)
		switch op {
		case 0: // an exit code, drawn afresh: catches a memo per command
			code := rnd.IntN(256)
			if r := s.run(t, inst, "exit "+strconv.Itoa(code), nil); r.status != code {
				t.Errorf("%s: exit %d reported %d", tag, code, r.status)
			}
		case 1: // stdin echoed
			seed, n := rnd.Uint64(), rnd.IntN(200<<10)
			switch {
			case g.NoStdin:
				if !loggedStdin {
					skipPart(t, "stdin echoes", "NoStdin")
					loggedStdin = true
				}
			case g.StdinNoEOF: // one line, ended by its newline
				in := textData(seed, min(n, 8<<10)+64)
				if r := s.run(t, inst, `read -r l; printf '%s\n' "$l"`, in[:64]); !bytes.Equal(r.stdout, in[:64]) {
					t.Errorf("%s: a stdin line echoed as %q", tag, r.stdout)
				}
			default:
				in := payload(seed, n, g)
				if r := s.run(t, inst, "cat", in); !bytes.Equal(r.stdout, in) {
					t.Errorf("%s: cat of %d bytes returned %d", tag, len(in), len(r.stdout))
				}
			}
		case 2: // fresh tokens on both channels: catches output carried between processes
			a, b := strconv.FormatUint(rnd.Uint64(), 36), strconv.FormatUint(rnd.Uint64(), 36)
			if r := s.run(t, inst, "printf '"+a+es+"'; printf '"+b+es+"' >&2", nil); string(r.stdout) != a+e || string(r.stderr) != b+e {
				t.Errorf("%s: stdout %q stderr %q, want %q and %q", tag, r.stdout, r.stderr, a, b)
			}
		case 3: // the reservation, then the holder still works
			first, in, want := s.hold(t, inst, g, tag)
			ctx, cancel := context.WithTimeout(context.Background(), s.timeout) // per op: the sequence as a whole may outlive one timeout
			second, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: s.sh("exit 0")})
			cancel()
			if !errors.Is(err, wire.CodeProcessAlreadyOpen) {
				if second != nil {
					second.Kill()
				}
				t.Errorf("%s: second open = %v, want %s", tag, err, wire.CodeProcessAlreadyOpen)
			}
			if r := s.collect(t, first, in); string(r.stdout) != want {
				t.Errorf("%s: the holder echoed %q", tag, r.stdout)
			}
		case 4: // a kill, after which the next op must open
			k := s.open(t, inst, adapters.ProcessSpec{Argv: s.sh(sleeper(g))})
			k.Kill()
			s.within(t, tag+" Wait after Kill", func() { k.Wait() })
		case 5: // Env reaches the process
			v := strconv.FormatUint(rnd.Uint64(), 36)
			proc := s.open(t, inst, adapters.ProcessSpec{Argv: s.sh(`printf '%s` + es + `' "$CHECKFU_ADAPTERTEST"`), Env: []string{"CHECKFU_ADAPTERTEST=" + v}})
			if !adapters.MatchEvidence(held, proc.Evidence()).OK() {
				t.Errorf("%s: evidence: %v", tag, adapters.MatchEvidence(held, proc.Evidence()).Err())
			}
			if r := s.collect(t, proc, nil); string(r.stdout) != v+e {
				t.Errorf("%s: Env: got %q, want %q", tag, r.stdout, v)
			}
		}
		if t.Failed() {
			return
		}
	}
}

func testEvidence(t tester, s *suite, p adapters.Provider) {
	d := p.Describe()
	for _, mode := range d.Capability.NetworkModes {
		for range 2 { // two instances: each evidence must name its own
			inst, spec := s.create(t, p, mode)
			proc := s.open(t, inst, adapters.ProcessSpec{Argv: s.sh("exit 0")})
			// Placement is judged by what the instance is, not by what
			// the provider says: a wired instance is remote, and earns
			// identity_only.
			held := adapters.HeldFor(d, spec)
			if wired(inst) {
				held.Placement = admission.PlacementRemote
			}
			want := adapters.AssuranceIdentityOnly
			if held.Placement == admission.PlacementInProcess {
				want = adapters.AssuranceIsolationChecked
			}
			m := adapters.MatchEvidence(held, proc.Evidence())
			if err := m.Err(); err != nil {
				t.Errorf("mode %s, instance %s: %v", mode, spec.ID, err)
			}
			if m.Assurance != want {
				t.Errorf("assurance %s for placement %s, want %s", m.Assurance, held.Placement, want)
			}
			if held.Placement != d.Placement {
				t.Errorf("instance %s runs across acp/wire, but its provider declares placement %s, which would earn %s", spec.ID, d.Placement, adapters.MatchEvidence(adapters.HeldFor(d, spec), proc.Evidence()).Assurance)
			}
			s.collect(t, proc, nil)
		}
	}
}

func testHonesty(t tester, s *suite, p adapters.Provider) {
	d := p.Describe()
	inst, _ := s.create(t, p, "")
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if d.Members.ListDir {
		if _, err := adapters.ListDir(ctx, p, inst, "."); err != nil {
			t.Errorf("declared list_dir: %v", err)
		}
	}
	if d.Members.Snapshots {
		if _, err := adapters.Snapshot(ctx, p, inst); err != nil {
			t.Errorf("declared snapshots: %v", err)
		}
	}
	if d.Members.FileTransfer {
		want := data(3, 1000)
		var got bytes.Buffer
		if err := adapters.WriteFile(ctx, p, inst, "adaptertest.bin", bytes.NewReader(want)); err != nil {
			t.Errorf("declared file transfer: WriteFile: %v", err)
		} else if err := adapters.ReadFile(ctx, p, inst, "adaptertest.bin", &got); err != nil || !bytes.Equal(got.Bytes(), want) {
			t.Errorf("declared file transfer: ReadFile: %v (equal %t)", err, bytes.Equal(got.Bytes(), want))
		}
	}
	if slices.Contains(d.Capability.NetworkModes, "none") {
		testNetworkNone(t, s, p)
	}
}

// testNetworkNone tries to break the none network mode: from inside an
// instance, dial a live listener on the host's loopback, and list the
// interfaces. The self-test first shows the probe runs and can use
// sockets at all, so a failed dial means the network, not the probe.
func testNetworkNone(t tester, s *suite, p adapters.Provider) {
	if len(s.h.Probe) == 0 {
		t.Fatal("the provider declares network mode none, and the Harness gives no Probe to check it")
	}
	inst, _ := s.create(t, p, "none")
	probe := func(args ...string) result {
		return s.collect(t, s.open(t, inst, adapters.ProcessSpec{Argv: append(slices.Clone(s.h.Probe), args...)}), nil)
	}
	if r := probe("selftest"); r.status != ProbeOK {
		t.Fatalf("probe selftest: status %d %q %q; the probe cannot run in the instance", r.status, r.stdout, r.stderr)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	if r := probe("dial", ln.Addr().String()); r.status != ProbeFailed || accepted.Load() != 0 {
		t.Errorf("network none: the probe reached the host's live listener %s (status %d, %d accepted): %s", ln.Addr(), r.status, accepted.Load(), strings.TrimSpace(string(r.stdout)))
	}
	if r := probe("interfaces"); r.status != ProbeOK || len(bytes.TrimSpace(r.stdout)) != 0 {
		t.Errorf("network none: the instance has interfaces besides loopback (status %d): %q", r.status, r.stdout)
	}
}
