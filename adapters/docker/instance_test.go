package docker

import (
	"context"
	"errors"
	"fmt"
	"github.com/checkfu/checkfu/adapters"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
)

func TestConnectRefusesMissingEngine(t *testing.T) {
	_, err := Connect(context.Background(), Options{Socket: filepath.Join(t.TempDir(), "none.sock")})
	if !errors.Is(err, CodeEngineUnreachable) {
		t.Fatalf("Connect to a missing socket = %v, want %s", err, CodeEngineUnreachable)
	}
}

func TestConnectRefusesTCPDockerHost(t *testing.T) {
	t.Setenv("DOCKER_HOST", "tcp://198.18.0.1:2375")
	_, err := Connect(context.Background(), Options{})
	if !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Connect with tcp DOCKER_HOST = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
}

func TestConnectNegotiates(t *testing.T) {
	e := testEngine(t)
	if v := e.APIVersion(); v < "1.41" || len(v) != 4 {
		t.Fatalf("API version %q, want at least 1.41", v)
	}
	t.Logf("engine %s, API %s", e.EngineVersion(), e.APIVersion())
}

func TestCreateInstanceRefusesMissingImage(t *testing.T) {
	e := testEngine(t)
	_, err := e.CreateInstance(context.Background(), InstanceConfig{Image: "checkfu-absent:never"})
	if !errors.Is(err, CodeImageMissing) {
		t.Fatalf("CreateInstance(missing image) = %v, want %s", err, CodeImageMissing)
	}
}

func TestCreateInstanceRefusesRoot(t *testing.T) {
	e := testEngine(t)
	img := images(t, e)
	for _, u := range []string{"0", "root", "0:0", "00:65534"} {
		_, err := e.CreateInstance(context.Background(), InstanceConfig{Image: img.tools, User: u})
		if !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("CreateInstance(user %q) = %v, want %s", u, err, checkfu.CodeConfigInvalid)
		}
	}
}

func TestProcessStdio(t *testing.T) {
	e := testEngine(t)
	inst := testInstance(t, e, InstanceConfig{Image: images(t, e).tools})
	r := run(t, inst, "hello\nworld\n", "sh", "-c", "cat; echo to-stderr >&2; exit 3")
	if r.stdout != "hello\nworld\n" || r.stderr != "to-stderr\n" || r.code != 3 {
		t.Fatalf("got stdout %q stderr %q code %d, want %q %q 3", r.stdout, r.stderr, r.code, "hello\nworld\n", "to-stderr\n")
	}
	// A large stdin arrives whole, and EOF after it.
	big := strings.Repeat("0123456789abcdef", 1<<14) // 256 KiB
	r = run(t, inst, big, "wc", "-c")
	if strings.TrimSpace(r.stdout) != fmt.Sprint(len(big)) || r.code != 0 {
		t.Fatalf("wc -c of %d bytes = %q (code %d)", len(big), r.stdout, r.code)
	}
}

func TestOneLiveProcess(t *testing.T) {
	e := testEngine(t)
	inst := testInstance(t, e, InstanceConfig{Image: images(t, e).tools})
	ctx := context.Background()
	p, err := inst.Open(ctx, ProcessSpec{Argv: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	// Under the no-reservation mutant the second Open replaces p as the
	// live process, and Destroy would not reach it.
	t.Cleanup(func() { p.Kill() })
	if _, err := inst.Open(ctx, ProcessSpec{Argv: []string{"true"}}); !errors.Is(err, wire.CodeProcessAlreadyOpen) {
		t.Fatalf("second Open while one lives = %v, want %s", err, wire.CodeProcessAlreadyOpen)
	}
	start := time.Now()
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, p, "")
	if r.code != 137 {
		t.Fatalf("killed process exited %d, want 137", r.code)
	}
	t.Logf("kill to reaped: %v", time.Since(start).Round(time.Millisecond))
	// Reaped: the reservation is free.
	if r := run(t, inst, "", "echo", "again"); r.stdout != "again\n" {
		t.Fatalf("open after reap: %q", r.stdout)
	}
	if err := inst.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := inst.Open(ctx, ProcessSpec{Argv: []string{"true"}}); !errors.Is(err, adapters.CodeInstanceDestroyed) {
		t.Fatalf("Open after Destroy = %v, want %s", err, adapters.CodeInstanceDestroyed)
	}
}

// TestIsolation checks the evidence the engine reports and, from inside
// the container, that the isolation is in force.
func TestIsolation(t *testing.T) {
	e := testEngine(t)
	inst := testInstance(t, e, InstanceConfig{Image: images(t, e).tools})
	p, err := inst.Open(context.Background(), ProcessSpec{Argv: []string{"sh", "-c", `
id -u; id -g
grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status
touch /rootfs-write 2>/dev/null && echo root-writable || echo root-read-only
touch /tmp/x && echo tmp-writable
stat -c %a /tmp
grep ' /tmp ' /proc/mounts
cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null
cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null
ls /sys/class/net
`}})
	if err != nil {
		t.Fatal(err)
	}
	ev := p.Evidence()
	r := finish(t, p, "")
	want := Evidence{
		Label: checkfu.LabelIsolated, Instance: inst.ID(), Container: ev.Container, ImageID: ev.ImageID,
		Runtime: RuntimeRunc, NetworkMode: "none", Networks: []string{"none"}, EngineVersion: e.EngineVersion(), APIVersion: e.APIVersion(),
		MemoryBytes: DefaultMemoryBytes, MemorySwapBytes: DefaultMemoryBytes, PidsLimit: DefaultPidsLimit, NanoCPUs: DefaultNanoCPUs,
		ReadonlyRootfs: true, CapDrop: []string{"ALL"}, NoNewPrivileges: true, User: DefaultUser, TmpfsTmp: tmpfsTmp, LogDriver: "none",
		IpcMode: "private",
	}
	if fmt.Sprint(ev) != fmt.Sprint(want) || !strings.HasPrefix(ev.ImageID, "sha256:") || ev.Container == "" {
		t.Errorf("evidence\n got %+v\nwant %+v", ev, want)
	}
	for _, line := range []string{
		"65534\n65534\n", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000",
		"NoNewPrivs:\t1", "root-read-only", "tmp-writable", "\n1777\n", "tmpfs /tmp tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n" /* mode 1777 is the default, not shown */, fmt.Sprint(DefaultMemoryBytes), fmt.Sprint(DefaultPidsLimit),
	} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("inside the container, want %q in:\n%s", line, r.stdout)
		}
	}
	if nets := strings.Fields(r.stdout[strings.LastIndex(strings.TrimSpace(r.stdout), "\n")+1:]); len(nets) != 1 || nets[0] != "lo" {
		t.Errorf("network none: interfaces %q, want only lo", nets)
	}
}

// TestCheckIsolationRefusesEachField proves every field of the read-back
// comparison is checked: changing any one is a mismatch.
func TestCheckIsolationRefusesEachField(t *testing.T) {
	inst := &Instance{id: "cfi-test", cfg: InstanceConfig{Runtime: RuntimeRunc, MemoryBytes: DefaultMemoryBytes, PidsLimit: DefaultPidsLimit, NanoCPUs: DefaultNanoCPUs, User: DefaultUser}}
	hc := inst.hostConfig()
	good := Evidence{NetworkMode: "none", Networks: []string{"none"}, Runtime: RuntimeRunc, MemoryBytes: DefaultMemoryBytes, MemorySwapBytes: DefaultMemoryBytes,
		PidsLimit: DefaultPidsLimit, NanoCPUs: DefaultNanoCPUs, ReadonlyRootfs: true, CapDrop: []string{"ALL"},
		NoNewPrivileges: true, User: DefaultUser, TmpfsTmp: tmpfsTmp, LogDriver: "none", IpcMode: "private"}
	if err := checkIsolation(hc, DefaultUser, good); err != nil {
		t.Fatalf("matching evidence refused: %v", err)
	}
	for name, mut := range map[string]func(*Evidence){
		"network":  func(e *Evidence) { e.NetworkMode = "bridge" },
		"networks": func(e *Evidence) { e.Networks = []string{"none", "checkfu-1-inner"} },
		"no nets":  func(e *Evidence) { e.Networks = nil },
		"runtime":  func(e *Evidence) { e.Runtime = "runsc" },
		"memory":   func(e *Evidence) { e.MemoryBytes = 0 },
		"swap":     func(e *Evidence) { e.MemorySwapBytes = -1 },
		"pids":     func(e *Evidence) { e.PidsLimit = 0 },
		"cpu":      func(e *Evidence) { e.NanoCPUs = 0 },
		"readonly": func(e *Evidence) { e.ReadonlyRootfs = false },
		"capdrop":  func(e *Evidence) { e.CapDrop = nil },
		"capadd":   func(e *Evidence) { e.CapAdd = []string{"NET_RAW"} },
		"nnp":      func(e *Evidence) { e.NoNewPrivileges = false },
		"user":     func(e *Evidence) { e.User = "0:0" },
		"tmpfs":    func(e *Evidence) { e.TmpfsTmp = "" },
		"dns":      func(e *Evidence) { e.DNS = []string{"127.0.0.1"} },
		"log":      func(e *Evidence) { e.LogDriver = "json-file" },
		"binds":    func(e *Evidence) { e.Binds = []string{"/:/host"} },
		"pid host": func(e *Evidence) { e.PidMode = "host" },
		"ipc host": func(e *Evidence) { e.IpcMode = "host" },
		"priv":     func(e *Evidence) { e.Privileged = true },
		"mount":    func(e *Evidence) { e.ExtraMounts = []string{"/etc:/host-etc"} },
	} {
		ev := good
		mut(&ev)
		if err := checkIsolation(hc, DefaultUser, ev); !errors.Is(err, CodeIsolationMismatch) {
			t.Errorf("%s changed: %v, want %s", name, err, CodeIsolationMismatch)
		}
	}
}

// TestBrokerDirRefusals: a broker directory is a clean absolute path, and
// only with the network policy none; the mount asked for is read-only at
// BrokerMount and is what checkIsolation compares.
func TestBrokerDirRefusals(t *testing.T) {
	var e Engine // the refusals come before any engine call
	for name, cfg := range map[string]InstanceConfig{
		"relative":  {Image: "x", BrokerDir: "run/broker"},
		"unclean":   {Image: "x", BrokerDir: "/run/../etc"},
		"colon":     {Image: "x", BrokerDir: "/run/a:b"},
		"allowlist": {Image: "x", BrokerDir: "/run/broker", Allowlist: &Allowlist{}},
	} {
		if _, err := e.CreateInstance(context.Background(), cfg); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s: CreateInstance = %v, want %s", name, err, checkfu.CodeConfigInvalid)
		}
	}
	inst := &Instance{cfg: InstanceConfig{BrokerDir: "/run/broker"}}
	if got := inst.hostConfig().Binds; len(got) != 1 || got[0] != "/run/broker:"+BrokerMount+":ro" {
		t.Errorf("binds %v", got)
	}
	if got := (&Instance{}).hostConfig().Binds; got != nil {
		t.Errorf("binds without a broker %v", got)
	}
}

// TestNetworkNone proves a "none" process has no route anywhere, with a
// live listener on every host address.
func TestNetworkNone(t *testing.T) {
	e := testEngine(t)
	h := listenHost(t)
	inst := testInstance(t, e, InstanceConfig{Image: images(t, e).tools})
	gw := fmt.Sprintf("198.19.0.1:%d", h.port)
	got := probes(t, run(t, inst, "", "cfprobe", "tcp:"+gw, "udp:"+gw))
	for _, c := range []string{"tcp:" + gw, "udp:" + gw} {
		if !strings.HasPrefix(got[c], "blocked") {
			t.Errorf("network none: %s %s, want blocked", c, got[c])
		}
	}
	if s := h.from(""); len(s) != 0 {
		t.Errorf("host listener reached: %q", s)
	}
}

// TestOpenContextBoundsOnlyTheOpen: the context given to Open bounds the
// open, not the process's life. Found by adaptertest, whose OpenProcess
// context ends as soon as the open returns: the exit wait was bound to
// it, so every process reported status -1 and lost its output.
func TestOpenContextBoundsOnlyTheOpen(t *testing.T) {
	e := testEngine(t)
	inst := testInstance(t, e, InstanceConfig{Image: images(t, e).tools})
	ctx, cancel := context.WithCancel(context.Background())
	p, err := inst.Open(ctx, ProcessSpec{Argv: []string{"sh", "-c", "cat; exit 3"}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	if r := finish(t, p, big); r.code != 3 || r.stdout != big {
		t.Fatalf("after the open's context ended: code %d, %d of %d bytes", r.code, len(r.stdout), len(big))
	}
}
