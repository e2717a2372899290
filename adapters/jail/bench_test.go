//go:build linux

package jail_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/deadowner"
	"github.com/checkfu/checkfu/adapters/jail"
)

// echoArgv is the command every variant runs: start to its first byte.
var echoArgv = []string{"/bin/echo", "x"}

// bwrapArgv is bubblewrap with the jail's namespaces and the same mount
// plan: the system directories read-only, a workspace, a private /tmp,
// /proc and a minimal /dev, no network, dying with its parent.
func bwrapArgv(bwrap, ws string) []string {
	a := []string{bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup",
		"--die-with-parent", "--new-session", "--clearenv", "--setenv", "PATH", jail.DefaultPath}
	for _, d := range jail.DefaultSystemDirs() {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			t, _ := os.Readlink(d)
			a = append(a, "--symlink", t, d)
		default:
			a = append(a, "--ro-bind", d, d)
		}
	}
	a = append(a, "--bind", ws, jail.WorkspacePath, "--chdir", jail.WorkspacePath, "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev", "--")
	return append(a, echoArgv...)
}

// settleEnv names an optional pause (a Go duration, like 30ms) after
// each start of BenchmarkStartToFirstByte, outside the timer, in every
// row alike: the kernel tears a start's namespaces and cgroup groups
// down asynchronously, and without a pause the next start, back to
// back, shares the CPUs with that teardown. Unset, the starts run back
// to back.
const settleEnv = "CHECKFU_BENCH_SETTLE"

var settleFor, _ = time.ParseDuration(os.Getenv(settleEnv))

// settle pauses for settleFor; the caller has stopped the timer.
func settle() { time.Sleep(settleFor) }

// A medianTimer times each start of a row on its own and reports their
// median as p50_ms: unlike ns/op (the mean), one start held up by
// another process on the shared machine does not move it.
type medianTimer struct {
	t0 time.Time
	d  []time.Duration
}

func (m *medianTimer) start() { m.t0 = time.Now() }
func (m *medianTimer) stop()  { m.d = append(m.d, time.Since(m.t0)) }

func (m *medianTimer) report(b *testing.B) { m.reportAs(b, "p50_ms") }

func (m *medianTimer) reportAs(b *testing.B, unit string) {
	if len(m.d) == 0 {
		return
	}
	d := slices.Clone(m.d)
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2])/1e6, unit)
}

// firstByte starts argv and reads its first stdout byte; it returns the
// command to be reaped outside the timer.
func firstByte(b *testing.B, argv []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var buf [1]byte
	if _, err := io.ReadFull(out, buf[:]); err != nil {
		b.Fatal(err)
	}
	return cmd
}

// BenchmarkStartToFirstByte measures, in one run, from the start to the
// first byte of echo's stdout: the jail (Create of a fresh instance,
// OpenProcess: a new jail built, read back and exec'd), with the init
// stage re-executed from this binary (jail) and with the
// checkfu-jail-init program (jail_program), a bare fork and
// exec of the same command (the baseline), bwrap with the same
// namespaces and mount plan (where bwrap is installed), and docker run
// (where CHECKFU_BENCH_DOCKER_IMAGE names an image of a reachable
// engine). Reaping and Destroy are outside the timer, and so is the
// pause settleEnv asks for. bench/jail/run.sh turns the figures into
// ratios (docs/benchmarks/adapters.md).
func BenchmarkStartToFirstByte(b *testing.B) {
	b.Run("os_exec", func(b *testing.B) {
		var m medianTimer
		for b.Loop() {
			m.start()
			cmd := firstByte(b, echoArgv)
			m.stop()
			b.StopTimer()
			cmd.Wait()
			settle()
			b.StartTimer()
		}
		m.report(b)
	})
	b.Run("jail", func(b *testing.B) { benchJail(b, jail.Config{}) })
	b.Run("jail_program", func(b *testing.B) { benchJail(b, jail.Config{InitProgram: mustInitProgram(b)}) })
	b.Run("bwrap", func(b *testing.B) {
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			b.Skip("no bwrap on PATH")
		}
		ws := b.TempDir()
		argv := bwrapArgv(bwrap, ws)
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			b.Skipf("bwrap cannot run here: %v: %s", err, out)
		}
		var m medianTimer
		for b.Loop() {
			m.start()
			cmd := firstByte(b, argv)
			m.stop()
			b.StopTimer()
			cmd.Wait()
			settle()
			b.StartTimer()
		}
		m.report(b)
	})
	b.Run("docker_run", func(b *testing.B) {
		image := os.Getenv("CHECKFU_BENCH_DOCKER_IMAGE")
		docker, err := exec.LookPath("docker")
		if image == "" || err != nil {
			b.Skip("set CHECKFU_BENCH_DOCKER_IMAGE to an image of a reachable engine")
		}
		argv := []string{docker, "run", "--rm", "--pull", "never", "--network", "none", image, "echo", "x"}
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			b.Skipf("docker run cannot run here: %v: %s", err, out)
		}
		var m medianTimer
		for b.Loop() {
			m.start()
			cmd := firstByte(b, argv)
			m.stop()
			b.StopTimer()
			cmd.Wait()
			settle()
			b.StartTimer()
		}
		m.report(b)
	})
}

// benchJail is the jail row of BenchmarkStartToFirstByte, on cfg's init
// stage.
func benchJail(b *testing.B, cfg jail.Config) {
	p := newProvider(b, cfg)
	var m medianTimer
	for i := 0; b.Loop(); i++ {
		m.start()
		done := jailFirstByte(b, p, i)
		m.stop()
		b.StopTimer()
		done()
		settle()
		b.StartTimer()
	}
	m.report(b)
}

// jailFirstByte creates instance i of p, starts echo in it and reads
// its first byte; it returns what reaps the jail and destroys the
// instance, for the caller to run outside the timer.
func jailFirstByte(b *testing.B, p *jail.Provider, i int) func() {
	ctx := context.Background()
	inst, err := jail.CreateForTest(b, p, p.Spec("bench-"+strconv.Itoa(i), testDigest), "")
	if err != nil {
		b.Fatal(err)
	}
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: echoArgv})
	if err != nil {
		b.Fatal(err)
	}
	var buf [1]byte
	if _, err := io.ReadFull(proc.Stdout(), buf[:]); err != nil {
		b.Fatal(err)
	}
	return func() {
		proc.Stdin().Close()
		io.Copy(io.Discard, proc.Stdout())
		io.Copy(io.Discard, proc.Stderr())
		proc.Wait()
		inst.Destroy(ctx)
	}
}

// BenchmarkJailAgainstBwrap pairs the starts themselves: each iteration
// starts echo once in a jail with the checkfu-jail-init program and
// once under bwrap (BenchmarkStartToFirstByte's two rows), in an order
// that alternates, and reports the median of each (jail_p50_ms,
// bwrap_p50_ms) and the median of the iterations' jail / bwrap ratios
// (ratio_p50): the two starts of a pair see the same load on the shared
// machine, which rows run seconds apart do not. ns/op is the pair.
func BenchmarkJailAgainstBwrap(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("no bwrap on PATH")
	}
	argv := bwrapArgv(bwrap, b.TempDir())
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		b.Skipf("bwrap cannot run here: %v: %s", err, out)
	}
	p := newProvider(b, jail.Config{InitProgram: mustInitProgram(b)})
	var jm, bm medianTimer
	var ratios []float64
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			if (i+k)%2 == 0 {
				jm.start()
				done := jailFirstByte(b, p, i)
				jm.stop()
				b.StopTimer()
				done()
			} else {
				bm.start()
				cmd := firstByte(b, argv)
				bm.stop()
				b.StopTimer()
				cmd.Wait()
			}
			settle()
			b.StartTimer()
		}
		ratios = append(ratios, float64(jm.d[len(jm.d)-1])/float64(bm.d[len(bm.d)-1]))
	}
	jm.reportAs(b, "jail_p50_ms")
	bm.reportAs(b, "bwrap_p50_ms")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "ratio_p50")
}

// BenchmarkIdleMemory reports what one idle jail (sleep, in a fresh
// instance) holds: the resident set of its process (rss_kB) and, where
// the jail has cgroups, its memory group's usage, kernel memory
// included (cgroup_kB); against the resident set of a bare sleep
// (bare_rss_kB), in the same run. The Runner's own side of an instance
// (a reaper goroutine, three pipes, the instance's directory) is not
// counted.
func BenchmarkIdleMemory(b *testing.B) {
	p := newProvider(b, jail.Config{})
	ctx := context.Background()
	var rss, cg, bare float64
	n := 0
	for i := 0; b.Loop(); i++ {
		id := "idle-" + strconv.Itoa(i)
		inst, err := jail.CreateForTest(b, p, p.Spec(id, testDigest), "")
		if err != nil {
			b.Fatal(err)
		}
		proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "echo ready; exec /bin/sleep 1000"}})
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, len("ready\n"))
		if _, err := io.ReadFull(proc.Stdout(), buf); err != nil {
			b.Fatal(err)
		}
		pid := jailPid(b)
		rss += statusKB(b, pid, "VmRSS")
		if m, _ := filepath.Glob("/sys/fs/cgroup/memory/checkfu-jail-" + deadowner.Self() + "/" + id + "-*/memory.usage_in_bytes"); len(m) == 1 {
			v, _ := os.ReadFile(m[0])
			n, _ := strconv.ParseFloat(strings.TrimSpace(string(v)), 64)
			cg += n / 1024
		}
		proc.Kill()
		proc.Wait()
		inst.Destroy(ctx)

		cmd := exec.Command("/bin/sh", "-c", "echo ready; exec /bin/sleep 1000")
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		io.ReadFull(out, buf)
		bare += statusKB(b, cmd.Process.Pid, "VmRSS")
		cmd.Process.Kill()
		cmd.Wait()
		n++
	}
	b.ReportMetric(rss/float64(n), "rss_kB")
	b.ReportMetric(cg/float64(n), "cgroup_kB")
	b.ReportMetric(bare/float64(n), "bare_rss_kB")
}

// jailPid is the host pid of this process's one child: the live jail.
func jailPid(b *testing.B) int {
	var kids []string
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		c, _ := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		kids = append(kids, strings.Fields(string(c))...)
	}
	if len(kids) != 1 {
		b.Fatalf("%d children, want the jail alone", len(kids))
	}
	pid, _ := strconv.Atoi(kids[0])
	return pid
}

func statusKB(b *testing.B, pid int, field string) float64 {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return n
		}
	}
	return 0
}
