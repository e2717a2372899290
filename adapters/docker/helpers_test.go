package docker

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testEngine connects to the engine DOCKER_HOST names, labelling
// everything TestLabel. Without an engine it skips, naming the missing
// engine; under CI it fails instead (.ci/setup.d/20-docker.sh starts one).
func testEngine(t testing.TB) *Engine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := Connect(ctx, Options{Label: TestLabel})
	if err != nil {
		host := os.Getenv("DOCKER_HOST")
		if host == "" {
			host = "unix:///var/run/docker.sock"
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but no Docker engine answers at %s (.ci/setup.d/20-docker.sh must start dockerd; CHECKFU_TEST_DOCKER=%q): %v", host, os.Getenv("CHECKFU_TEST_DOCKER"), err)
		}
		t.Skipf("no Docker engine answers at %s (start one with .ci/setup.d/20-docker.sh or set DOCKER_HOST): %v", host, err)
	}
	t.Cleanup(e.Close)
	return e
}

// testImages are the images the tests use, built once per test binary
// (and found again by content in later runs).
type testImages struct {
	tools string // busybox + cfprobe + cfdnsd
	guard string
}

var (
	imagesOnce sync.Mutex
	imagesDone *testImages
)

// binDir holds the static test binaries between runs; go build's own
// cache makes a rebuild a link.
func binDir(t testing.TB) string {
	d, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(d, "checkfu", "docker", "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// images builds (or finds) the tools and guard images.
func images(t testing.TB, e *Engine) *testImages {
	t.Helper()
	imagesOnce.Lock()
	defer imagesOnce.Unlock()
	if imagesDone != nil {
		return imagesDone
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := binDir(t)
	start := time.Now()
	bins := map[string]string{}
	for name, pkg := range map[string]string{
		"cfprobe": "./adapters/docker/internal/cmd/cfprobe",
		"cfdnsd":  "./adapters/docker/internal/cmd/cfdnsd",
		"checkfu": "./cmd/checkfu",
	} {
		out := filepath.Join(dir, name)
		if err := BuildStatic(ctx, "../..", pkg, out); err != nil {
			t.Fatal(err)
		}
		bins[name] = out
	}
	built := time.Since(start)
	tools, err := e.BusyboxImage(ctx, ImageOptions{Binaries: map[string]string{
		"/usr/local/bin/cfprobe": bins["cfprobe"],
		"/usr/local/bin/cfdnsd":  bins["cfdnsd"],
	}})
	if err != nil {
		t.Fatal(err)
	}
	guard, err := e.GuardImage(ctx, bins["checkfu"])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("images: go build %v, import %v (%s, %s)", built.Round(time.Millisecond), (time.Since(start) - built).Round(time.Millisecond), tools, guard)
	imagesDone = &testImages{tools: tools, guard: guard}
	return imagesDone
}

// testInstance creates an instance, destroyed when the test ends.
func testInstance(t testing.TB, e *Engine, cfg InstanceConfig) *Instance {
	t.Helper()
	inst, err := e.CreateInstance(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := inst.Destroy(ctx); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	return inst
}

// result is one finished process.
type result struct {
	stdout, stderr string
	code           int
}

// run opens argv in inst with stdin, reads both streams to EOF and reaps
// it.
func run(t testing.TB, inst *Instance, stdin string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := inst.Open(ctx, ProcessSpec{Argv: argv})
	if err != nil {
		t.Fatalf("open %q: %v", argv, err)
	}
	return finish(t, p, stdin)
}

// finish writes stdin, closes it, drains the streams and reaps p.
func finish(t testing.TB, p *Process, stdin string) result {
	t.Helper()
	go func() {
		io.WriteString(p.Stdin(), stdin)
		p.Stdin().Close()
	}()
	var out, errb bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); io.Copy(&out, p.Stdout()) }()
	go func() { defer wg.Done(); io.Copy(&errb, p.Stderr()) }()
	code, err := p.Wait()
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	wg.Wait()
	return result{out.String(), errb.String(), code}
}

// hostListener is a live TCP and UDP listener on the host's every
// address (0.0.0.0), on one port, counting what reaches it.
type hostListener struct {
	port int
	tcp  net.Listener
	udp  net.PacketConn

	mu   sync.Mutex
	seen []string // guarded by mu; "tcp FROM" / "udp FROM"
}

func listenHost(t testing.TB) *hostListener {
	t.Helper()
	var h *hostListener
	for i := 0; i < 20; i++ {
		ln, err := net.Listen("tcp4", "0.0.0.0:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp4", ln.Addr().String())
		if err != nil {
			ln.Close()
			continue
		}
		h = &hostListener{port: port, tcp: ln, udp: pc}
		break
	}
	if h == nil {
		t.Fatal("no port free for TCP and UDP at once")
	}
	go func() {
		for {
			c, err := h.tcp.Accept()
			if err != nil {
				return
			}
			h.note("tcp " + c.RemoteAddr().String())
			c.Close()
		}
	}()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := h.udp.ReadFrom(buf)
			if err != nil {
				return
			}
			h.note("udp " + from.String())
			h.udp.WriteTo(buf[:n], from)
		}
	}()
	t.Cleanup(func() { h.tcp.Close(); h.udp.Close() })
	return h
}

func (h *hostListener) note(s string) {
	h.mu.Lock()
	h.seen = append(h.seen, s)
	h.mu.Unlock()
}

// from returns what reached the listener from addresses with prefix.
func (h *hostListener) from(prefix string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, s := range h.seen {
		if _, addr, _ := strings.Cut(s, " "); strings.HasPrefix(addr, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// probes parses cfprobe's output into check -> "RESULT DETAIL".
func probes(t testing.TB, r result) map[string]string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("cfprobe exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		check, rest, _ := strings.Cut(line, " ")
		m[check] = rest
	}
	return m
}
