package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/egress"
)

// allowlistProvider returns a runc provider offering allowlist on the
// test engine, whose guards resolve with an owned DNS server at OUTER.53
// and may dial the test-owned target at OUTER.3.
func allowlistProvider(t *testing.T, e *Engine, img *testImages) *Provider {
	t.Helper()
	p, err := e.NewProvider(context.Background(), ProviderConfig{
		Image: img.tools, GuardImage: img.guard,
		testServices: func(outer netip.Prefix) (string, []netip.Prefix) {
			b := outer.Addr().As4()
			b[3] = 53
			resolver := netip.AddrPortFrom(netip.AddrFrom4(b), 53).String()
			b[3] = 3
			return resolver, []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4(b), 32)}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// collect drains a contract process's streams and reaps it.
func collect(t *testing.T, p adapters.Process) result {
	t.Helper()
	p.Stdin().Close()
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

// TestProviderAllowlist drives network mode allowlist through the
// contract on the real engine: the instance's guard lets the workload
// reach exactly the spec's host (a live, test-owned target) and refuses
// another name and the same name on another port; the workload has no
// direct route; the evidence matches with network mode allowlist; and
// Destroy leaves nothing behind (containers, networks, firewall rules,
// the policy directory).
func TestProviderAllowlist(t *testing.T) {
	t.Parallel()
	e := testEngine(t)
	img := images(t, e)
	p := allowlistProvider(t, e, img)
	spec := p.Spec("cf-allowlist", "sha256:"+strings.Repeat("cd", 32))
	spec.NetworkMode = "allowlist"
	spec.AllowedHosts = []egress.HostPort{{Host: "target.checkfu.test", Port: 8080}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	inst, err := p.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("allowlist instance up in %v", time.Since(start).Round(time.Millisecond))
	a := inst.(*providerInstance).allowlist
	destroyed := false
	t.Cleanup(func() {
		// Close the topology too: under a mutant whose Destroy leaves it,
		// nothing may stay behind on the shared engine.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if !destroyed {
			inst.Destroy(ctx)
			a.Close(ctx)
		}
	})
	at := func(n byte) netip.Addr { return a.addr(a.Outer(), n) }
	if _, err := a.StartService(ctx, ServiceSpec{Name: "dns", Image: img.tools, Network: ServiceOuter, IP: at(53), Ready: "listening on",
		Cmd: []string{"cfdnsd", "-listen", ":53", "-a", "target.checkfu.test=" + at(3).String(), "-a", "other.checkfu.test=" + at(3).String()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.StartService(ctx, ServiceSpec{Name: "target", Image: img.tools, Network: ServiceOuter, IP: at(3),
		Cmd: []string{"httpd", "-f", "-p", "8080", "-h", "/etc"}}); err != nil {
		t.Fatal(err)
	}

	guard := a.GuardAddr().String()
	allowed := "http:" + guard + ":http://target.checkfu.test:8080/passwd"
	otherName := "http:" + guard + ":http://other.checkfu.test:8080/passwd"
	otherPort := "http:" + guard + ":http://target.checkfu.test:80/passwd"
	direct := "tcp:" + at(3).String() + ":8080"
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"cfprobe", allowed, otherName, otherPort, direct}})
	if err != nil {
		t.Fatal(err)
	}
	if m := adapters.MatchEvidence(adapters.HeldFor(p.Describe(), spec), proc.Evidence()); !m.OK() || m.Assurance != adapters.AssuranceIsolationChecked {
		t.Errorf("allowlist evidence: %v (assurance %s); evidence %+v", m.Err(), m.Assurance, proc.Evidence())
	}
	if ev := proc.Evidence(); ev.NetworkMode != "allowlist" || fmt.Sprint(ev.Networks) != "["+a.InnerNetwork()+"]" {
		t.Errorf("allowlist evidence: network mode %q, networks %q", ev.NetworkMode, ev.Networks)
	}
	got := probes(t, collect(t, proc))
	for c, w := range map[string]string{
		allowed:   "reached 200 -",
		otherName: "reached 403 host_not_allowed",
		otherPort: "reached 403 host_not_allowed",
		direct:    "blocked",
	} {
		if g := got[c]; g != w && !(w == "blocked" && strings.HasPrefix(g, "blocked ")) {
			t.Errorf("%s: got %q, want %q", c, g, w)
		}
	}

	// Destroy removes everything the instance made; a second is a no-op.
	guardID, innerID, outerID, dir, bridge := a.guard, a.innerID, a.outerID, a.policyDir, a.innerBridge
	if err := inst.Destroy(ctx); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	destroyed = inst.(*providerInstance).allowlist == nil
	if err := inst.Destroy(ctx); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
	if _, err := e.c.InspectContainer(ctx, guardID); !errors.Is(err, CodeEngineObjectMissing) {
		t.Errorf("the guard after Destroy: %v, want %s", err, CodeEngineObjectMissing)
	}
	for _, n := range []string{innerID, outerID} {
		if _, err := e.c.InspectNetwork(ctx, n); !errors.Is(err, CodeEngineObjectMissing) {
			t.Errorf("network %s after Destroy: %v, want %s", n[:12], err, CodeEngineObjectMissing)
		}
	}
	if ids, err := e.c.ListByLabel(ctx, "checkfu.network", innerID); err != nil || len(ids) != 0 {
		t.Errorf("containers of the topology after Destroy: %q, %v", ids, err)
	}
	for _, bin := range []string{"iptables", "ip6tables"} {
		if exec.Command(bin, "-w", "5", "-C", "INPUT", "-i", bridge, "-j", "DROP").Run() == nil {
			t.Errorf("%s still drops %s in INPUT after Destroy", bin, bridge)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the policy directory after Destroy: %v", err)
	}
	if _, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"true"}}); !errors.Is(err, adapters.CodeInstanceDestroyed) {
		t.Errorf("OpenProcess after Destroy: %v, want %s", err, adapters.CodeInstanceDestroyed)
	}
}
