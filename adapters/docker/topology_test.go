package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters/docker/internal/engine"
)

// service starts a long-running container of the tools image on network
// at ip, removed when the test ends, and waits until it logs ready.
func service(t *testing.T, e *Engine, img, name, network string, ip netip.Addr, ready string, cmd ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pids := int64(64)
	id, err := e.c.CreateContainer(ctx, name, &engine.ContainerConfig{
		Image: img, Cmd: cmd, Entrypoint: []string{}, User: DefaultUser, Labels: e.labels(nil),
		HostConfig: engine.HostConfig{
			NetworkMode: network, Memory: 64 << 20, MemorySwap: 64 << 20, PidsLimit: &pids,
			ReadonlyRootfs: true, CapDrop: []string{"ALL"}, CapAdd: []string{"NET_BIND_SERVICE"}, SecurityOpt: []string{"no-new-privileges"},
		},
		NetworkingConfig: &engine.NetworkingConfig{EndpointsConfig: map[string]*engine.EndpointConfig{
			network: {IPAMConfig: &engine.IPAMConfig{IPv4Address: ip.String()}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.c.RemoveContainer(ctx, id, true); err != nil {
			t.Errorf("removing %s: %v", name, err)
		}
	})
	if err := e.c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if ready != "" {
		if err := e.waitLog(ctx, id, ready, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// topology builds an allowlist topology with an owned DNS server
// (OUTER.53, logging every query) and a live HTTP target (OUTER.3:8080),
// removed when the test ends. priv.checkfu.test resolves to the host's
// outer gateway, where h listens. It takes the first free slot from one
// picked by the process ID, so test processes (mutants run several at
// once) do not collide.
func topology(t *testing.T, e *Engine, img *testImages, h *hostListener, withoutHostFix bool) (*Allowlist, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var a *Allowlist
	var outer netip.Prefix
	first := MinSlot + 10 + os.Getpid()%(MaxSlot-MinSlot-10)
	for i := 0; i < MaxSlot-MinSlot && a == nil; i++ {
		slot := MinSlot + (first-MinSlot+i)%(MaxSlot-MinSlot+1)
		outer = netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(2*slot + 1), 0}), 24)
		b := outer.Addr().As4()
		b[3] = 53
		resolver := netip.AddrFrom4(b)
		b[3] = 3
		policy := fmt.Sprintf(`{"type":"allowlist","allowed_hosts":["target.checkfu.test:8080","priv.checkfu.test:%d"]}`, h.port)
		var err error
		a, err = e.NewAllowlist(ctx, AllowlistConfig{
			Slot: slot, Policy: []byte(policy), GuardImage: img.guard,
			Resolver:                netip.AddrPortFrom(resolver, 53).String(),
			TreatAsPublicForTesting: []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4(b), 32)},
			withoutHostFix:          withoutHostFix,
		})
		if errors.Is(err, CodeEngineNameConflict) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if a == nil {
		t.Fatal("no free topology slot")
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("closing the topology: %v", err)
		}
	})
	at := func(n byte) netip.Addr { return a.addr(outer, n) }
	dns := service(t, e, img.tools, fmt.Sprintf("checkfu-%d-dns", a.slot), a.OuterNetwork(), at(53), "listening on",
		"cfdnsd", "-listen", ":53", "-a", "target.checkfu.test="+at(3).String(), "-a", "priv.checkfu.test="+at(1).String())
	service(t, e, img.tools, fmt.Sprintf("checkfu-%d-target", a.slot), a.OuterNetwork(), at(3), "",
		"httpd", "-f", "-p", "8080", "-h", "/etc")
	return a, dns
}

func randomLabel() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// TestAllowlistTopology proves, with live listeners, what the allowlist
// topology lets through and what it does not.
func TestAllowlistTopology(t *testing.T) {
	t.Parallel()
	e := testEngine(t)
	img := images(t, e)
	h := listenHost(t)
	start := time.Now()
	a, dns := topology(t, e, img, h, false)
	t.Logf("topology up in %v", time.Since(start).Round(time.Millisecond))
	inst := testInstance(t, e, InstanceConfig{Image: img.tools, Allowlist: a})

	// Each of the two host fixes is in place on its own (either alone
	// stops the leaks below, so the probes cannot tell one missing).
	n, err := e.c.InspectNetwork(context.Background(), a.innerID)
	if err != nil {
		t.Fatal(err)
	}
	if !n.Internal || n.Options["com.docker.network.bridge.inhibit_ipv4"] != "true" || n.Options["com.docker.network.bridge.name"] != a.innerBridge {
		t.Errorf("inner network: internal %v, options %v; want internal with inhibit_ipv4 on bridge %s", n.Internal, n.Options, a.innerBridge)
	}
	for _, bin := range []string{"iptables", "ip6tables"} {
		if out, err := exec.Command(bin, "-w", "5", "-C", "INPUT", "-i", a.innerBridge, "-j", "DROP").CombinedOutput(); err != nil {
			t.Errorf("%s has no INPUT drop for %s: %v %s", bin, a.innerBridge, err, out)
		}
	}

	guard := a.GuardAddr().String()
	p, err := inst.Open(context.Background(), ProcessSpec{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := p.Evidence(); ev.NetworkMode != a.innerName || fmt.Sprint(ev.Networks) != "["+a.innerName+"]" || fmt.Sprint(ev.DNS) != "["+BlackholeDNS+"]" {
		t.Errorf("allowlist evidence: network mode %q, networks %q, dns %q", ev.NetworkMode, ev.Networks, ev.DNS)
	}
	finish(t, p, "")
	in1 := fmt.Sprintf("%s:%d", a.addr(a.Inner(), 1), h.port)
	out1 := fmt.Sprintf("%s:%d", a.addr(a.Outer(), 1), h.port)
	docker0 := fmt.Sprintf("198.19.0.1:%d", h.port)
	tunnel := randomLabel() + ".tunnel.test"
	direct := randomLabel() + ".direct.test"
	allowed := "http:" + guard + ":http://target.checkfu.test:8080/passwd"
	denied := "http:" + guard + ":http://other.checkfu.test:8080/passwd"
	private := fmt.Sprintf("http:%s:http://priv.checkfu.test:%d/", guard, h.port)
	want := map[string]string{
		allowed: "reached 200 -",
		denied:  "reached 403 host_not_allowed",
		private: "reached 403 destination_not_public",
		// No direct route: the target is live (the guard reached it).
		"tcp:" + a.addr(a.Outer(), 3).String() + ":8080": "blocked",
		// No host listener, over TCP and UDP, on any bridge address.
		"tcp:" + in1: "blocked", "udp:" + in1: "blocked",
		"tcp:" + out1: "blocked", "udp:" + out1: "blocked",
		"tcp:" + docker0: "blocked", "udp:" + docker0: "blocked",
		// The owned DNS, straight.
		"dns:" + a.addr(a.Outer(), 53).String() + ":53:" + direct: "blocked",
	}
	checks := []string{"dns:127.0.0.11:53:" + tunnel}
	for c := range want {
		checks = append(checks, c)
	}
	start = time.Now()
	got := probes(t, run(t, inst, "", append([]string{"cfprobe"}, checks...)...))
	t.Logf("probes in %v: %v", time.Since(start).Round(time.Millisecond), got)
	for c, w := range want {
		if g := got[c]; g != w && !(w == "blocked" && strings.HasPrefix(g, "blocked ")) {
			t.Errorf("%s: got %q, want %q", c, g, w)
		}
	}
	if s := h.from("198.18."); len(s) != 0 {
		t.Errorf("the host listener was reached from the topology: %q", s)
	}
	logs, err := e.logs(context.Background(), dns)
	if err != nil {
		t.Fatal(err)
	}
	// The log works (the guard's lookups are in it), and the names the
	// workload asked for are not.
	if !strings.Contains(logs, "query target.checkfu.test TypeA") {
		t.Errorf("the owned DNS never saw the guard's lookup; its log:\n%s", logs)
	}
	for _, n := range []string{tunnel, direct} {
		if strings.Contains(logs, n) {
			t.Errorf("%s reached the owned DNS from the workload; its log:\n%s", n, logs)
		}
	}
	if gl, _ := a.GuardLogs(context.Background()); !strings.Contains(gl, "host_not_allowed") {
		t.Errorf("the guard did not log its refusal:\n%s", gl)
	}
}

// TestAllowlistWithoutHostFixLeaks is the negative control: the same
// topology with only --internal (no inhibit_ipv4, no INPUT drop) lets the
// workload reach the host's listener, so the probe above can see a leak.
func TestAllowlistWithoutHostFixLeaks(t *testing.T) {
	t.Parallel()
	e := testEngine(t)
	img := images(t, e)
	h := listenHost(t)
	a, _ := topology(t, e, img, h, true)
	inst := testInstance(t, e, InstanceConfig{Image: img.tools, Allowlist: a})
	in1 := fmt.Sprintf("%s:%d", a.addr(a.Inner(), 1), h.port)
	docker0 := fmt.Sprintf("198.19.0.1:%d", h.port)
	got := probes(t, run(t, inst, "", "cfprobe", "tcp:"+in1, "udp:"+in1, "tcp:"+docker0))
	for _, c := range []string{"tcp:" + in1, "udp:" + in1, "tcp:" + docker0} {
		if got[c] != "reached" {
			t.Errorf("without the fix, %s: %q, want reached (the probe cannot see a leak)", c, got[c])
		}
	}
	if s := h.from(a.WorkloadAddr().String() + ":"); len(s) < 2 {
		t.Errorf("without the fix the host listener saw %q from the workload, want TCP and UDP", s)
	}
}
