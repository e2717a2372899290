package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/docker/internal/engine"
)

// Slot bounds of [AllowlistConfig.Slot].
const (
	MinSlot = 1
	MaxSlot = 120
)

// guardPort is the port the guard listens on, on its inner address.
const guardPort = 3128

// AllowlistConfig configures [Engine.NewAllowlist].
type AllowlistConfig struct {
	// Slot picks the topology's two /24s: the internal network is
	// 198.18.(2*Slot).0/24 and the outer one 198.18.(2*Slot+1).0/24, with
	// bridges cfSLOTi and cfSLOTo. Topologies in different slots run side
	// by side. MinSlot to MaxSlot.
	Slot int
	// Policy is the guard's network policy document, such as
	// {"type":"allowlist","allowed_hosts":["example.com:443"]}. Required.
	Policy []byte
	// GuardImage is GuardImage's answer. Required.
	GuardImage string
	// Resolver is the "ip:port" of the DNS server the guard resolves
	// with; empty means the engine's (the daemon's --dns).
	Resolver string
	// TreatAsPublicForTesting is passed to the guard's -treat-as-public:
	// test blocks (inside 198.18.0.0/15) it may dial. Never in production.
	TreatAsPublicForTesting []netip.Prefix

	// withoutHostFix builds the topology the way an --internal network
	// alone does: no inhibit_ipv4 and no INPUT drop. Tests only: it is
	// the negative control proving the probe can see a host leak.
	withoutHostFix bool
}

// An Allowlist is the topology for the "allowlist" network policy. The
// workload sits on an internal network whose only other member is a guard
// container running `checkfu guard`; the guard's second leg is on an outer
// network. The host is unreachable from the internal network by two
// fixes, both applied:
//
//   - the internal network has com.docker.network.bridge.inhibit_ipv4, so
//     its bridge holds no IPv4 address and the workload has no next hop
//     to the host;
//   - iptables and ip6tables drop, in INPUT, everything arriving on its
//     bridge (an --internal network alone leaves every host address
//     reachable, and DOCKER-USER, a FORWARD chain, cannot stop it).
type Allowlist struct {
	e                    *Engine
	slot                 int
	inner, outer         netip.Prefix
	innerName, outerName string
	innerBridge          string
	innerID, outerID     string     // set once created; Close removes only these
	guard                string     // container ID
	policyDir            string     // host directory holding the policy file
	rules                [][]string // installed firewall rules, as iptables arguments after the binary
}

// NewAllowlist builds the topology: both networks, the firewall rules and
// the guard, started and listening. Close removes all of it.
func (e *Engine) NewAllowlist(ctx context.Context, cfg AllowlistConfig) (_ *Allowlist, err error) {
	if cfg.Slot < MinSlot || cfg.Slot > MaxSlot {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: slot %d is not between %d and %d", cfg.Slot, MinSlot, MaxSlot)
	}
	if len(cfg.Policy) == 0 || cfg.GuardImage == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: an allowlist topology needs a policy and a guard image")
	}
	a := &Allowlist{
		e:           e,
		slot:        cfg.Slot,
		inner:       netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(2 * cfg.Slot), 0}), 24),
		outer:       slotOuter(cfg.Slot),
		innerName:   fmt.Sprintf("checkfu-%d-inner", cfg.Slot),
		outerName:   fmt.Sprintf("checkfu-%d-outer", cfg.Slot),
		innerBridge: fmt.Sprintf("cf%di", cfg.Slot),
	}
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			a.Close(cctx)
			cancel()
		}
	}()
	opts := map[string]string{"com.docker.network.bridge.name": a.innerBridge}
	if !cfg.withoutHostFix {
		opts["com.docker.network.bridge.inhibit_ipv4"] = "true"
	}
	if a.innerID, err = e.c.CreateNetwork(ctx, &engine.NetworkConfig{
		Name: a.innerName, CheckDuplicate: true, Driver: "bridge", Internal: true,
		IPAM:    engine.NetworkIPAM{Config: []engine.NetworkSubnet{{Subnet: a.inner.String(), Gateway: a.addr(a.inner, 1).String()}}},
		Options: opts, Labels: e.labels(nil),
	}); err != nil {
		return nil, err
	}
	if !cfg.withoutHostFix {
		for _, bin := range []string{"iptables", "ip6tables"} {
			if err := a.addRule(ctx, bin, "INPUT", "-i", a.innerBridge, "-j", "DROP"); err != nil {
				return nil, err
			}
		}
	}
	if a.outerID, err = e.c.CreateNetwork(ctx, &engine.NetworkConfig{
		Name: a.outerName, CheckDuplicate: true, Driver: "bridge",
		IPAM:    engine.NetworkIPAM{Config: []engine.NetworkSubnet{{Subnet: a.outer.String(), Gateway: a.addr(a.outer, 1).String()}}},
		Options: map[string]string{"com.docker.network.bridge.name": fmt.Sprintf("cf%do", cfg.Slot)}, Labels: e.labels(nil),
	}); err != nil {
		return nil, err
	}
	if err := a.startGuard(ctx, cfg); err != nil {
		return nil, err
	}
	return a, nil
}

// slotOuter is the outer network's block of slot.
func slotOuter(slot int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(2*slot + 1), 0}), 24)
}

// addr returns the n-th address of p.
func (a *Allowlist) addr(p netip.Prefix, n byte) netip.Addr {
	b := p.Addr().As4()
	b[3] = n
	return netip.AddrFrom4(b)
}

// Inner returns the internal network's block.
func (a *Allowlist) Inner() netip.Prefix { return a.inner }

// Outer returns the outer network's block.
func (a *Allowlist) Outer() netip.Prefix { return a.outer }

// OuterNetwork returns the name of the outer network, where the guard
// reaches destinations.
func (a *Allowlist) OuterNetwork() string { return a.outerName }

// InnerNetwork returns the name of the internal network.
func (a *Allowlist) InnerNetwork() string { return a.innerName }

// GuardAddr returns the guard's address on the internal network.
func (a *Allowlist) GuardAddr() netip.AddrPort {
	return netip.AddrPortFrom(a.addr(a.inner, 2), guardPort)
}

// WorkloadAddr returns the address of the instance's process on the
// internal network (one live process at a time holds it).
func (a *Allowlist) WorkloadAddr() netip.Addr { return a.addr(a.inner, 3) }

// proxyEnv is the environment pointing a workload at the guard.
func (a *Allowlist) proxyEnv() []string {
	u := "http://" + a.GuardAddr().String()
	return []string{"http_proxy=" + u, "https_proxy=" + u, "HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "no_proxy=", "NO_PROXY="}
}

// addRule inserts a firewall rule and records it for Close.
func (a *Allowlist) addRule(ctx context.Context, bin, chain string, rule ...string) error {
	args := append([]string{"-w", "5", "-I", chain}, rule...)
	if msg, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
		return &checkfu.Refusal{Code: CodeFirewallFailed, Message: "docker: " + bin + " " + strings.Join(args, " ") + ": " + checkfu.Quote(strings.TrimSpace(string(msg))), Err: err}
	}
	a.rules = append(a.rules, append([]string{bin, "-w", "5", "-D", chain}, rule...))
	return nil
}

// startGuard creates the guard on the internal network, connects it to
// the outer one, starts it and waits until it listens.
func (a *Allowlist) startGuard(ctx context.Context, cfg AllowlistConfig) error {
	dir, err := os.MkdirTemp("", "checkfu-guard-")
	if err != nil {
		return err
	}
	a.policyDir = dir
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.json"), cfg.Policy, 0o644); err != nil {
		return err
	}
	cmd := []string{"-listen", "0.0.0.0:" + fmt.Sprint(guardPort), "-policy", "/etc/checkfu/policy.json"}
	if cfg.Resolver != "" {
		cmd = append(cmd, "-resolver", cfg.Resolver)
	}
	for _, p := range cfg.TreatAsPublicForTesting {
		cmd = append(cmd, "-treat-as-public", p.String())
	}
	pids := int64(256)
	a.guard, err = a.e.c.CreateContainer(ctx, fmt.Sprintf("checkfu-%d-guard", a.slot), &engine.ContainerConfig{
		Image: cfg.GuardImage, Cmd: cmd, User: DefaultUser,
		Labels: a.e.labels(map[string]string{"checkfu.role": "guard"}),
		HostConfig: engine.HostConfig{
			NetworkMode: a.innerName, Memory: 128 << 20, MemorySwap: 128 << 20, PidsLimit: &pids,
			ReadonlyRootfs: true, CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges"},
			Binds: []string{filepath.Join(dir, "policy.json") + ":/etc/checkfu/policy.json:ro"},
		},
		NetworkingConfig: &engine.NetworkingConfig{EndpointsConfig: map[string]*engine.EndpointConfig{
			a.innerName: {IPAMConfig: &engine.IPAMConfig{IPv4Address: a.GuardAddr().Addr().String()}},
		}},
	})
	if err != nil {
		return err
	}
	if err := a.e.c.ConnectNetwork(ctx, a.outerName, a.guard, a.addr(a.outer, 2).String()); err != nil {
		return err
	}
	if err := a.e.c.StartContainer(ctx, a.guard); err != nil {
		return err
	}
	return a.e.waitLog(ctx, a.guard, "listening on ", 10*time.Second)
}

// waitLog polls a container's logs until they hold want, the container
// stops, or timeout passes.
func (e *Engine) waitLog(ctx context.Context, id, want string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		out, err := e.logs(ctx, id)
		if err != nil {
			return err
		}
		if strings.Contains(out, want) {
			return nil
		}
		info, err := e.c.InspectContainer(ctx, id)
		if err != nil {
			return err
		}
		if !info.State.Running || time.Now().After(deadline) {
			return checkfu.Refuse(CodeEngineRequestFailed, "docker: container %s did not log %q (running %v): %s", id[:12], want, info.State.Running, checkfu.Quote(out))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logs returns a container's stdout and stderr so far, concatenated.
func (e *Engine) logs(ctx context.Context, id string) (string, error) {
	rc, err := e.c.Logs(ctx, id)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	var b bytes.Buffer
	if err := engine.Demux(rc, &b, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// GuardLogs returns what the guard has logged so far.
func (a *Allowlist) GuardLogs(ctx context.Context) (string, error) { return a.e.logs(ctx, a.guard) }

// Close removes the guard, both networks and the firewall rules. It
// reports the first failure and carries on with the rest.
func (a *Allowlist) Close(ctx context.Context) error {
	var errs []error
	if ids, err := a.e.c.ListByLabel(ctx, "checkfu.network", a.innerID); a.innerID != "" && err == nil {
		for _, id := range ids {
			errs = append(errs, a.e.c.RemoveContainer(ctx, id, true))
		}
	}
	if a.guard != "" {
		errs = append(errs, a.e.c.RemoveContainer(ctx, a.guard, true))
	}
	for _, n := range []string{a.innerID, a.outerID} {
		if n == "" {
			continue
		}
		if err := a.e.c.RemoveNetwork(ctx, n); err != nil && !errors.Is(err, CodeEngineObjectMissing) {
			errs = append(errs, err)
		}
	}
	for i := len(a.rules) - 1; i >= 0; i-- {
		r := a.rules[i]
		if msg, err := exec.CommandContext(ctx, r[0], r[1:]...).CombinedOutput(); err != nil {
			errs = append(errs, &checkfu.Refusal{Code: CodeFirewallFailed, Message: "docker: removing " + strings.Join(r, " ") + ": " + checkfu.Quote(strings.TrimSpace(string(msg))), Err: err})
		}
	}
	a.rules = nil
	if a.policyDir != "" {
		os.RemoveAll(a.policyDir)
	}
	return errors.Join(errs...)
}
