package docker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"
)

// dockerCLI is the docker CLI the baselines run: Debian's, which the
// engine ships with.
const dockerCLI = "/usr/bin/docker"

// TestBenchmarkRatios measures the adapter against bare docker CLI
// baselines in the same run, and prints the rows of
// docs/benchmarks/adapters.md. It runs only with CHECKFU_DOCKER_BENCH=1.
func TestBenchmarkRatios(t *testing.T) {
	if os.Getenv("CHECKFU_DOCKER_BENCH") != "1" {
		t.Skip("set CHECKFU_DOCKER_BENCH=1 to measure the adapter against the docker CLI")
	}
	if _, err := os.Stat(dockerCLI); err != nil {
		t.Skipf("no docker CLI at %s: %v", dockerCLI, err)
	}
	e := testEngine(t)
	img := images(t, e).tools
	const rounds = 7
	ctx := context.Background()

	// Create-to-first-byte: a new instance and its first process's first
	// stdout byte, against `docker run` of the same image.
	adapter := measure(t, rounds, func() {
		start := time.Now()
		inst, err := e.CreateInstance(ctx, InstanceConfig{Image: img})
		if err != nil {
			t.Fatal(err)
		}
		p, err := inst.Open(ctx, ProcessSpec{Argv: []string{"echo", "x"}})
		if err != nil {
			t.Fatal(err)
		}
		p.Stdin().Close()
		firstByte(t, p.Stdout())
		d := time.Since(start)
		go io.Copy(io.Discard, p.Stderr())
		io.Copy(io.Discard, p.Stdout())
		p.Wait()
		inst.Destroy(ctx)
		lap(d)
	})
	bare := measure(t, rounds, func() {
		start := time.Now()
		cmd := exec.Command(dockerCLI, "run", "--rm", "--pull", "never", "--network", "none", img, "echo", "x")
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		firstByte(t, out)
		lap(time.Since(start))
		io.Copy(io.Discard, out)
		cmd.Wait()
	})
	same := measure(t, rounds, func() {
		start := time.Now()
		cmd := exec.Command(dockerCLI, "run", "--rm", "--pull", "never", "--network", "none", "--init",
			"--memory", "256m", "--memory-swap", "256m", "--pids-limit", "128", "--cpus", "1", "--read-only",
			"--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--user", DefaultUser,
			"--tmpfs", "/tmp:"+tmpfsTmp, "--log-driver", "none", "-i", img, "echo", "x")
		cmd.Stdin = strings.NewReader("")
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		firstByte(t, out)
		lap(time.Since(start))
		io.Copy(io.Discard, out)
		cmd.Wait()
	})
	fmt.Printf("| create-to-first-byte, adapter (instance + open + first stdout byte) | %v |\n", adapter)
	fmt.Printf("| create-to-first-byte, `docker run --rm --network none IMAGE echo x` | %v |\n", bare)
	fmt.Printf("| create-to-first-byte, `docker run` with the adapter's isolation flags | %v |\n", same)
	fmt.Printf("| ratio adapter / bare docker run | %.2f |\n", float64(adapter)/float64(bare))
	fmt.Printf("| ratio adapter / docker run, same flags | %.2f |\n", float64(adapter)/float64(same))

	// stdout throughput: N MiB of zeros through the adapter, read to
	// io.Discard, against `docker exec` with stdout to /dev/null. The
	// fixed cost of each path (the same command writing 0 bytes) is
	// subtracted, so the ratio is of streaming alone.
	const mib = 256
	inst := testInstance(t, e, InstanceConfig{Image: img})
	adapterRun := func(n int) time.Duration {
		return measure(t, 3, func() {
			start := time.Now()
			p, err := inst.Open(ctx, ProcessSpec{Argv: []string{"dd", "if=/dev/zero", "bs=1048576", fmt.Sprintf("count=%d", n)}})
			if err != nil {
				t.Fatal(err)
			}
			p.Stdin().Close()
			go io.Copy(io.Discard, p.Stderr())
			got, _ := io.Copy(io.Discard, p.Stdout())
			p.Wait()
			if got != int64(n)<<20 {
				t.Fatalf("read %d bytes, want %d", got, n<<20)
			}
			lap(time.Since(start))
		})
	}
	cid := startSleeper(t, img)
	execRun := func(n int) time.Duration {
		return measure(t, 3, func() {
			devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			defer devnull.Close()
			start := time.Now()
			cmd := exec.Command(dockerCLI, "exec", cid, "dd", "if=/dev/zero", "bs=1048576", fmt.Sprintf("count=%d", n))
			cmd.Stdout = devnull
			if err := cmd.Run(); err != nil {
				t.Fatal(err)
			}
			lap(time.Since(start))
		})
	}
	a0, aN := adapterRun(0), adapterRun(mib)
	x0, xN := execRun(0), execRun(mib)
	aRate := float64(mib) / (aN - a0).Seconds()
	xRate := float64(mib) / (xN - x0).Seconds()
	fmt.Printf("| stdout, adapter: %d MiB in %v (fixed cost %v) | %.0f MiB/s |\n", mib, aN, a0, aRate)
	fmt.Printf("| stdout, `docker exec ... > /dev/null`: %d MiB in %v (fixed cost %v) | %.0f MiB/s |\n", mib, xN, x0, xRate)
	fmt.Printf("| ratio adapter / docker exec (streaming) | %.2f |\n", aRate/xRate)
}

var laps []time.Duration

func lap(d time.Duration) { laps = append(laps, d) }

// measure runs f rounds times (f calls lap once) after one warm-up round
// and returns the median lap.
func measure(t *testing.T, rounds int, f func()) time.Duration {
	t.Helper()
	f()
	laps = laps[:0]
	for i := 0; i < rounds; i++ {
		f()
	}
	if len(laps) != rounds {
		t.Fatalf("%d laps, want %d", len(laps), rounds)
	}
	sort.Slice(laps, func(i, j int) bool { return laps[i] < laps[j] })
	return laps[rounds/2].Round(100 * time.Microsecond)
}

func firstByte(t *testing.T, r io.Reader) {
	t.Helper()
	if _, err := bufio.NewReader(r).ReadByte(); err != nil {
		t.Fatalf("no first byte: %v", err)
	}
}

// startSleeper starts a long-running container for docker exec, removed
// when the test ends.
func startSleeper(t *testing.T, img string) string {
	t.Helper()
	out, err := exec.Command(dockerCLI, "run", "-d", "--pull", "never", "--network", "none", "--label", TestLabel, img, "sleep", "600").Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command(dockerCLI, "rm", "-f", id).Run() })
	return id
}
