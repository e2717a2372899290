package adaptertest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/process"
	"github.com/checkfu/checkfu/admission"
)

func TestMain(m *testing.M) {
	ProbeMain()
	os.Exit(m.Run())
}

// hooks break a process provider in one place each.
type hooks struct {
	describe func(d *adapters.Description)
	spec     func(s *adapters.InstanceSpec)
	open     func(i *hInst, ctx context.Context, s adapters.ProcessSpec) (adapters.Process, error)
	argv     func(argv []string) []string
	proc     func(i *hInst, p *hProc)
}

type hProvider struct {
	h hooks

	mu    sync.Mutex // guards first
	first *adapters.Evidence
}

func (p *hProvider) Describe() adapters.Description {
	d := process.New().Describe()
	if p.h.describe != nil {
		p.h.describe(&d)
	}
	return d
}

func (p *hProvider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	asked := spec
	if p.h.spec != nil {
		p.h.spec(&spec)
	}
	inner, err := process.New().Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &hInst{Instance: inner, p: p, spec: spec, asked: asked}, nil
}

type hInst struct {
	adapters.Instance
	p     *hProvider
	spec  adapters.InstanceSpec // what the inner instance was made with
	asked adapters.InstanceSpec // what the Runner asked for
	slot  adapters.Slot

	mu     sync.Mutex // guards extra and last
	extra  []adapters.Instance
	last   int
	inited bool
}

func (i *hInst) OpenProcess(ctx context.Context, s adapters.ProcessSpec) (adapters.Process, error) {
	if i.p.h.argv != nil {
		s.Argv = i.p.h.argv(slices.Clone(s.Argv))
	}
	var inner adapters.Process
	var err error
	if i.p.h.open != nil {
		inner, err = i.p.h.open(i, ctx, s)
	} else {
		inner, err = i.Instance.OpenProcess(ctx, s)
	}
	if err != nil {
		return nil, err
	}
	hp := &hProc{Process: inner, stdout: inner.Stdout(), ev: inner.Evidence()}
	if i.p.h.proc != nil {
		i.p.h.proc(i, hp)
	}
	return hp, nil
}

func (i *hInst) Destroy(ctx context.Context) error {
	i.mu.Lock()
	extra := i.extra
	i.mu.Unlock()
	for _, e := range extra {
		e.Destroy(ctx)
	}
	return i.Instance.Destroy(ctx)
}

type hProc struct {
	adapters.Process
	stdin  io.WriteCloser // nil: the inner process's
	stdout io.Reader
	ev     adapters.Evidence
	wait   func() (int, error)
	kill   func() error
}

func (p *hProc) Stdout() io.Reader { return p.stdout }
func (p *hProc) Stdin() io.WriteCloser {
	if p.stdin != nil {
		return p.stdin
	}
	return p.Process.Stdin()
}
func (p *hProc) Evidence() adapters.Evidence { return p.ev }
func (p *hProc) Wait() (int, error) {
	if p.wait != nil {
		return p.wait()
	}
	return p.Process.Wait()
}
func (p *hProc) Kill() error {
	if p.kill != nil {
		return p.kill()
	}
	return p.Process.Kill()
}

// A tailDropper delivers the first n bytes and then drains the rest
// into nothing, as a fixed-size capture buffer would.
type tailDropper struct {
	r io.Reader
	n int
}

func (t *tailDropper) Read(b []byte) (int, error) {
	if t.n <= 0 {
		io.Copy(io.Discard, t.r)
		return 0, io.EOF
	}
	if len(b) > t.n {
		b = b[:t.n]
	}
	n, err := t.r.Read(b)
	t.n -= n
	return n, err
}

// A noEOF stdin passes writes on and never closes: end of input never
// reaches the process.
type noEOF struct{ io.WriteCloser }

func (noEOF) Close() error { return nil }

// A noStdin refuses writes: a provider whose processes take no input,
// honestly (the inner stdin is closed at once, so the process reads end
// of input).
type noStdin struct{}

func (noStdin) Write([]byte) (int, error) { return 0, errors.New("no stdin") }
func (noStdin) Close() error              { return nil }

func withoutStdin(_ *hInst, p *hProc) {
	p.Process.Stdin().Close()
	p.stdin = noStdin{}
}

// brokenProviders are plausible bugs of an adapter author, each with the
// subtests that must reject it. TestSuiteRejectsBrokenProviders fails if
// the suite ever stops rejecting one.
var brokenProviders = []struct {
	name string
	h    hooks
	want []string
}{
	{"allows two live processes", hooks{
		open: func(i *hInst, ctx context.Context, s adapters.ProcessSpec) (adapters.Process, error) {
			fresh, err := process.New().Create(ctx, i.spec) // a fresh backend per open: no reservation
			if err != nil {
				return nil, err
			}
			i.mu.Lock()
			i.extra = append(i.extra, fresh)
			i.mu.Unlock()
			return fresh.OpenProcess(ctx, s)
		},
	}, []string{"OneLiveProcess", "Sequence"}},
	{"merges stderr into stdout", hooks{
		argv: func(a []string) []string {
			a[len(a)-1] = "exec 2>&1; " + a[len(a)-1]
			return a
		},
	}, []string{"Stdio", "Sequence"}},
	{"exit code always 0", hooks{
		proc: func(_ *hInst, p *hProc) {
			p.wait = func() (int, error) { _, err := p.Process.Wait(); return 0, err }
		},
	}, []string{"ExitCodes", "Kill", "Sequence"}},
	{"reports the previous process's exit status", hooks{
		proc: func(i *hInst, p *hProc) {
			p.wait = func() (int, error) {
				st, err := p.Process.Wait()
				i.mu.Lock()
				defer i.mu.Unlock()
				prev := i.last
				i.last = st
				if !i.inited {
					i.inited = true
					return st, err
				}
				return prev, err
			}
		},
	}, []string{"ExitCodes", "Sequence"}},
	{"lies about network mode none", hooks{
		describe: func(d *adapters.Description) { d.Capability.NetworkModes = []string{"none", process.NetworkMode} },
		spec: func(s *adapters.InstanceSpec) {
			if s.NetworkMode == "none" {
				s.NetworkMode = process.NetworkMode
			}
		},
		proc: func(i *hInst, p *hProc) {
			p.ev.NetworkMode = i.asked.NetworkMode
			if p.ev.NetworkMode == "none" {
				p.ev.Networks = nil
			}
		},
	}, []string{"CapabilityHonesty"}},
	{"evidence names another image", hooks{
		proc: func(_ *hInst, p *hProc) { p.ev.RootImage = "sha256:" + strings.Repeat("a", 64) },
	}, []string{"Evidence", "Sequence"}},
	{"evidence of the first instance it made", hooks{
		proc: func(i *hInst, p *hProc) {
			i.p.mu.Lock()
			defer i.p.mu.Unlock()
			if i.p.first == nil {
				ev := p.ev
				i.p.first = &ev
			}
			p.ev = *i.p.first
		},
	}, []string{"Evidence"}},
	{"keeps the reservation after a kill", hooks{
		open: func(i *hInst, ctx context.Context, s adapters.ProcessSpec) (adapters.Process, error) {
			if err := i.slot.Acquire(); err != nil {
				return nil, err
			}
			p, err := i.Instance.OpenProcess(ctx, s)
			if err != nil {
				i.slot.Release()
			}
			return p, err
		},
		proc: func(i *hInst, p *hProc) {
			var mu sync.Mutex
			killed := false
			p.kill = func() error { mu.Lock(); killed = true; mu.Unlock(); return p.Process.Kill() }
			p.wait = func() (int, error) {
				st, err := p.Process.Wait()
				mu.Lock()
				defer mu.Unlock()
				if !killed { // the release is on the exit path only
					i.slot.Release()
				}
				return st, err
			}
		},
	}, []string{"OneLiveProcess"}},
	{"drops stdout past 1 MiB", hooks{
		proc: func(_ *hInst, p *hProc) { p.stdout = &tailDropper{r: p.Process.Stdout(), n: 1 << 20} },
	}, []string{"Stdio"}},
	{"Kill only closes stdin", hooks{
		proc: func(_ *hInst, p *hProc) { p.kill = func() error { return p.Stdin().Close() } },
	}, []string{"Kill", "OneLiveProcess"}},
	{"declares list_dir it does not implement", hooks{
		describe: func(d *adapters.Description) { d.Capability.ListDir, d.Members.ListDir = true, true },
	}, []string{"CapabilityHonesty"}},
	// Leaks of the host into the instance: each passes every other
	// subtest, Env included.
	{"starts from the host's environment", hooks{
		open: func(i *hInst, ctx context.Context, s adapters.ProcessSpec) (adapters.Process, error) {
			s.Env = append(os.Environ(), s.Env...)
			return i.Instance.OpenProcess(ctx, s)
		},
	}, []string{"Canaries"}},
	{"hands the host's open files to the process", hooks{
		open: func(i *hInst, ctx context.Context, s adapters.ProcessSpec) (adapters.Process, error) {
			defer inheritHostFiles()()
			return i.Instance.OpenProcess(ctx, s)
		},
	}, []string{"Canaries"}},
	{"runs processes in the host's temporary directory", hooks{
		open: func(i *hInst, ctx context.Context, s adapters.ProcessSpec) (adapters.Process, error) {
			s.Dir = os.TempDir()
			return i.Instance.OpenProcess(ctx, s)
		},
	}, []string{"Canaries"}},
	{"appends the host's own arguments", hooks{
		argv: func(a []string) []string { return append(a, "-from-host") },
	}, []string{"Canaries"}},
}

// inheritHostFiles clears close-on-exec on the host's open regular
// files, as an adapter passing its files through would, and returns a
// function that restores it. Pipes are left alone, so other processes'
// streams still end.
func inheritHostFiles() (restore func()) {
	ents, _ := os.ReadDir("/proc/self/fd")
	var fds []int
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, 0); errno == 0 {
			fds = append(fds, fd)
		}
	}
	return func() {
		for _, fd := range fds {
			syscall.CloseOnExec(fd)
		}
	}
}

// gapProviders are broken providers with declared gaps: a gap excuses
// exactly what it declares, so an undeclared fault is still caught, and
// a gap declared but not real is caught by DeclaredGaps.
// TestSuiteHonoursOnlyDeclaredGaps fails if the suite stops rejecting
// one.
var gapProviders = []struct {
	name string
	h    hooks
	want []string
}{
	{"declares no gap but lacks stdin EOF", hooks{
		proc: func(_ *hInst, p *hProc) { p.stdin = noEOF{p.Process.Stdin()} },
	}, []string{"OneLiveProcess", "Stdio", "Sequence"}},
	{"declares LineFramed yet merges stderr into stdout", hooks{
		describe: func(d *adapters.Description) { d.Gaps.LineFramed = true },
		argv: func(a []string) []string {
			a[len(a)-1] = "exec 2>&1; " + a[len(a)-1]
			return a
		},
	}, []string{"Stdio", "Sequence"}},
	{"declares NoStdin yet drops stdout past 1 MiB", hooks{
		describe: func(d *adapters.Description) { d.Gaps.NoStdin = true },
		proc: func(i *hInst, p *hProc) {
			withoutStdin(i, p)
			p.stdout = &tailDropper{r: p.Process.Stdout(), n: 1 << 20}
		},
	}, []string{"Stdio"}},
	{"declares KillLeaderOnly yet Kill only closes stdin", hooks{
		describe: func(d *adapters.Description) { d.Gaps.KillLeaderOnly = true },
		proc:     func(_ *hInst, p *hProc) { p.kill = func() error { return p.Stdin().Close() } },
	}, []string{"Kill", "OneLiveProcess"}},
	{"declares NoStdin it has", hooks{
		describe: func(d *adapters.Description) { d.Gaps.NoStdin = true },
	}, []string{"DeclaredGaps"}},
	{"declares StdinNoEOF it has", hooks{
		describe: func(d *adapters.Description) { d.Gaps.StdinNoEOF = true },
	}, []string{"DeclaredGaps"}},
	{"declares LineFramed it has not", hooks{
		describe: func(d *adapters.Description) { d.Gaps.LineFramed = true },
	}, []string{"DeclaredGaps"}},
	{"declares TextOnly it has not", hooks{
		describe: func(d *adapters.Description) { d.Gaps.TextOnly = true },
	}, []string{"DeclaredGaps"}},
	{"declares KillLeaderOnly yet kills the group", hooks{
		describe: func(d *adapters.Description) { d.Gaps.KillLeaderOnly = true },
	}, []string{"DeclaredGaps"}},
}

func brokenHarness(t testing.TB, h hooks) Harness {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Harness{
		New: func(testing.TB) adapters.Provider { return &hProvider{h: h} },
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			s := process.Spec(id, "sha256:"+strings.Repeat("0", 64))
			s.NetworkMode = mode
			return s
		},
		Shell:   []string{"/bin/sh", "-c"},
		Probe:   []string{exe, ProbeArg},
		Timeout: brokenTimeout,
	}
}

// Step bounds of the recorded suite runs. Harness.Timeout is the suite's
// hang detector, not a speed claim.
const (
	// brokenTimeout bounds each step of a run against a local broken
	// provider: short, since a broken provider may hang every step.
	brokenTimeout = 4 * time.Second
	// wiredTimeout bounds each step of a run against a provider wired
	// across acp/wire: the suite's default (Harness.Timeout zero). Its
	// Wire/Drop step streams 4 MiB through the wire and a cut, and stays
	// away for reconnectDelay; under -race on a loaded 2-core machine
	// that took over 4 s (brokenTimeout) in most runs.
	wiredTimeout = 30 * time.Second
)

// TestSuiteRejectsBrokenProviders runs the suite, recorded, against each
// broken provider and asserts that the named subtests reject it.
func TestSuiteRejectsBrokenProviders(t *testing.T) { rejects(t, brokenProviders) }

// TestSuiteHonoursOnlyDeclaredGaps does the same for gapProviders.
func TestSuiteHonoursOnlyDeclaredGaps(t *testing.T) { rejects(t, gapProviders) }

func rejects(t *testing.T, providers []struct {
	name string
	h    hooks
	want []string
}) {
	for _, b := range providers {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder(t)
			rec.run("run", func(tt tester) { runSuite(tt, brokenHarness(t, b.h)) })
			got := rec.log.failedSubtests()
			if !rec.Failed() {
				t.Fatalf("the suite passed a provider that %s", b.name)
			}
			for _, w := range b.want {
				if !slices.Contains(got, w) {
					t.Errorf("subtest %s did not reject it; failed: %v", w, got)
				}
			}
			rec.log.mu.Lock()
			for _, l := range rec.log.lines {
				t.Log(l)
			}
			rec.log.mu.Unlock()
		})
	}
}

// TestSuiteRejectsBrokenRemote: a remote provider whose journal is one
// minimum window with no detach grace loses stdout across a drop; the
// Wire subtest rejects it, and the same provider with the defaults
// passes the recorded suite.
func TestSuiteRejectsBrokenRemote(t *testing.T) {
	for _, c := range []struct {
		name   string
		p      process.Remote
		broken bool
	}{
		{"defaults", process.Remote{}, false},
		{"journal too small, no grace", process.Remote{OutputWindow: wire.MinWindow, DetachGrace: -1}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := brokenHarness(t, hooks{})
			h.New = func(testing.TB) adapters.Provider { return c.p }
			h.Timeout = wiredTimeout
			rec := newRecorder(t)
			rec.run("run", func(tt tester) { runSuite(tt, h) })
			got := rec.log.failedSubtests()
			for _, l := range rec.log.lines {
				t.Log(l)
			}
			if c.broken && !slices.Contains(got, "Wire/Drop") {
				t.Errorf("Wire/Drop did not reject it; failed: %v", got)
			}
			if !c.broken && rec.Failed() {
				t.Errorf("the recorded suite failed it: %v\n%s", got, strings.Join(rec.log.lines, "\n"))
			}
		})
	}
}

// claimsInProcess is package process's Remote, its instances wired
// across acp/wire, declaring itself in_process: a Description that
// would earn isolation_checked for what crosses a wire.
type claimsInProcess struct{ process.Remote }

func (p claimsInProcess) Describe() adapters.Description {
	d := p.Remote.Describe()
	d.Placement = admission.PlacementInProcess
	return d
}

// TestSuiteRejectsWiredInProcess: the suite judges placement by what the
// instance is, so a wired provider declaring in_process fails the Wire
// and Evidence subtests (and its wire is still checked).
func TestSuiteRejectsWiredInProcess(t *testing.T) {
	h := brokenHarness(t, hooks{})
	h.New = func(testing.TB) adapters.Provider { return claimsInProcess{} }
	h.Timeout = wiredTimeout
	rec := newRecorder(t)
	rec.run("run", func(tt tester) { runSuite(tt, h) })
	got := rec.log.failedSubtests()
	for _, l := range rec.log.lines {
		t.Log(l)
	}
	for _, w := range []string{"Wire", "Evidence"} {
		if !slices.Contains(got, w) {
			t.Errorf("subtest %s did not reject it; failed: %v", w, got)
		}
	}
}

// TestRecordedControl shows that the wrapper and the recorder alone fail
// nothing: the unbroken provider passes the recorded suite, and so does
// one that honestly lacks stdin and declares it.
func TestRecordedControl(t *testing.T) {
	for _, c := range []struct {
		name string
		h    hooks
	}{
		{"unbroken", hooks{}},
		{"declares the NoStdin it lacks", hooks{
			describe: func(d *adapters.Description) { d.Gaps.NoStdin = true },
			proc:     withoutStdin,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := newRecorder(t)
			rec.run("run", func(tt tester) { runSuite(tt, brokenHarness(t, c.h)) })
			if rec.Failed() {
				t.Errorf("the recorded suite failed it: %v\n%s", rec.log.failedSubtests(), strings.Join(rec.log.lines, "\n"))
			}
		})
	}
}

// TestCanariesLeaveNothingBehind runs the canary subtest against a
// provider that isolates nothing at all (the host's environment, its
// temporary directory as the working directory) and asserts that the
// file the suite had another instance write is gone from every host
// directory it could reach once the subtest ends.
func TestCanariesLeaveNothingBehind(t *testing.T) {
	leaky := hooks{open: func(i *hInst, ctx context.Context, s adapters.ProcessSpec) (adapters.Process, error) {
		s.Env = append(os.Environ(), s.Env...)
		s.Dir = os.TempDir()
		return i.Instance.OpenProcess(ctx, s)
	}}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{os.TempDir(), "/tmp", home}
	before := map[string]bool{}
	for _, d := range dirs {
		for _, f := range leftFiles(t, d) {
			before[f] = true
		}
	}
	rec := newRecorder(t)
	h := brokenHarness(t, leaky)
	rec.run("Canaries", func(tt tester) { testCanaries(tt, &suite{h: h, timeout: h.Timeout}, &hProvider{h: leaky}) })
	if !rec.Failed() {
		t.Fatal("the canary subtest passed a provider that isolates nothing")
	}
	for _, d := range dirs {
		for _, f := range leftFiles(t, d) {
			if !before[f] {
				t.Errorf("the canary subtest left %s behind", f)
				os.Remove(f) // so that a failing run leaves nothing either
			}
		}
	}
}

// leftFiles lists the files in dir named as the canary subtest names
// what another instance leaves.
func leftFiles(t *testing.T, dir string) []string {
	m, err := filepath.Glob(filepath.Join(dir, canaryFile+"*-left"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
