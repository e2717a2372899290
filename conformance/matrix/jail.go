package matrix

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/egress"
)

// JailProvider is checkfu's daemonless Linux provider (adapters/jail),
// whose matrix runs on the namespace topology.
const JailProvider = jail.Name

// jailBinary is where the checkfu binary under test appears in a jail.
const jailBinary = jail.BindRoot + "/checkfu"

// markerEnv is the environment variable that marks a matrix workload in
// a jail, so the host can find its process in /proc.
const markerEnv = "CHECKFU_MATRIX_RUN"

// jailProfileDigest is the profile digest of the matrix's jail instances.
const jailProfileDigest = "sha256:6d61747269780000000000000000000000000000000000000000000000000000"

// jailState is what the network-namespace variant adds to a run.
type jailState struct {
	top       *nsTopology
	servers   []*http.Server
	loopPort  uint16 // the live listener on the host's loopback
	guardPort uint16 // the guard's own listener on the host's loopback
	guardOpts map[string]any
	guardLog  lockedBuf
	dnsLog    lockedBuf

	mu   sync.Mutex
	hits []Hit // guarded by mu

	wl       procView
	wlErr    error
	wlFiles  scan
	brokerPV procView
}

func (j *jailState) record(h Hit) {
	j.mu.Lock()
	j.hits = append(j.hits, h)
	j.mu.Unlock()
}

// A lockedBuf is a log many goroutines write.
type lockedBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

func (b *lockedBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// jailHosts is the guard's allowlist on the namespace topology: the
// Docker topology's, with the loopback target and the guard's own
// listener at their ports on the host's loopback.
func (r *run) jailHosts() []egress.HostPort {
	hosts := []egress.HostPort{
		{Host: admitted, Port: 8080}, {Host: privName, Port: 8080}, {Host: flipName, Port: 8080}, {Host: multiName, Port: 8080},
		{Host: loopName, Port: r.j.loopPort}, {Host: deadName, Port: 8082}, {Host: selfName, Port: r.j.guardPort},
	}
	// A spec's hosts are sorted (adapters.CheckSpec).
	slices.SortFunc(hosts, func(a, b egress.HostPort) int {
		if c := strings.Compare(a.Host, b.Host); c != 0 {
			return c
		}
		return int(a.Port) - int(b.Port)
	})
	return hosts
}

// runJail is Run on the namespace topology, with the jail provider of
// this binary as the Runner's provider and its LocalGuard as the guard.
func runJail(ctx context.Context, cfg Config) (_ *Report, err error) {
	start := time.Now()
	r := &run{cfg: cfg, topo: map[string]any{"variant": "network-namespace"}, nonce: NewCanary()[len("cfcanary-"):], j: &jailState{}}
	j := r.j
	if j.top, err = newNSTopology(ctx, hostPublic, hostPrivate, hostDNS); err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range j.servers {
			s.Close()
		}
		if cerr := j.top.close(); cerr != nil && err == nil {
			err = &checkfu.Refusal{Code: CodeTopologyFailed, Message: "matrix: removing the namespace topology", Err: cerr}
		}
	}()
	r.outer = j.top.prefix
	r.guard = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), jail.RelayPort)
	if r.host, err = listenHost(); err != nil {
		return nil, &checkfu.Refusal{Code: CodeTopologyFailed, Message: "matrix: host listener", Err: err}
	}
	defer r.host.close()
	if err := r.jailServices(); err != nil {
		return nil, &checkfu.Refusal{Code: CodeTopologyFailed, Message: "matrix: starting the owned DNS and listeners", Err: err}
	}
	if err := r.liveness(ctx); err != nil {
		return nil, err
	}
	dns := netip.AddrPortFrom(r.at(r.outer, hostDNS), 53).String()
	treat := []netip.Prefix{netip.PrefixFrom(r.at(r.outer, hostPublic), 32)}
	// The guard's port was picked free and released: another process
	// may take it before the guard binds it, so a taken port is picked
	// again.
	var inst adapters.Instance
	for try := 1; ; try++ {
		guardAddr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), j.guardPort).String()
		j.guardOpts = map[string]any{"resolver": dns, "treat_as_public": treat, "addr": guardAddr, "allowed_hosts": r.jailHosts()}
		p, err := jail.New(jail.Config{
			Binds: []jail.Bind{{Source: cfg.Binary, Target: jailBinary}},
			Guard: jail.LocalGuard(jail.GuardOptions{Resolver: dns, TreatAsPublicForTesting: treat, Addr: guardAddr,
				Logger: slog.New(slog.NewTextHandler(&j.guardLog, nil))}),
		})
		if err != nil {
			return nil, err
		}
		spec := p.Spec("matrix-"+r.nonce[:12], jailProfileDigest)
		spec.NetworkMode = "allowlist"
		spec.AllowedHosts = r.jailHosts()
		inst, err = p.Create(ctx, spec)
		if err == nil {
			break
		}
		if try == maxGuardPortTries || !errors.Is(err, syscall.EADDRINUSE) {
			return nil, err
		}
		if j.guardPort, err = freeLoopbackPort(); err != nil {
			return nil, err
		}
	}
	defer inst.Destroy(context.WithoutCancel(ctx))
	r.topo["namespace"], r.topo["outer"], r.topo["host_end"] = j.top.name, r.outer.String(), j.top.at(nsTopoHost).String()
	r.topo["relay"], r.topo["guard"] = r.guard.String(), j.guardOpts
	if err := r.observeJail(ctx, inst); err != nil {
		return nil, err
	}
	// The DNS control: the host, which has a route to the owned DNS,
	// asks it the control's name with the probe's own code.
	r.topo["dns_control"] = map[string]any{"from": "host", "server": dns, "name": r.controlName()}
	r.dnsControl = runCheck(Check{ID: "dd-dns-control", Kind: "dns", Addr: dns, Name: r.controlName()})
	r.observeJailBroker(ctx)
	r.guardLogs = j.guardLog.String()
	for _, line := range strings.Split(j.dnsLog.String(), "\n") {
		if q, ok := strings.CutPrefix(line, "query "); ok {
			r.queries = append(r.queries, q)
		}
	}
	topo, _ := json.Marshal(r.topo)
	rep := &Report{
		Target: cfg.Target, Provider: cfg.Target.Provider, Revision: cfg.Target.Revision,
		Label: checkfu.LabelIsolated.String(), Started: start.UTC(), Engine: "jail " + jail.MaterializationRevision,
		Slot: int(r.outer.Addr().As4()[2]), Topology: topo, TopoSum: conformance.DigestOf(topo),
	}
	for _, c := range r.cases() {
		c.Digest = conformance.DigestOf(c.Evidence)
		rep.Cases = append(rep.Cases, c)
		if cfg.Progress != nil {
			cfg.Progress(c)
		}
	}
	rep.wallClock = time.Since(start)
	rep.WallTime = rep.wallClock.Round(time.Millisecond).String()
	return rep, nil
}

// jailServices starts the live listeners (inside the namespace, and one
// on the host's loopback), picks the guard's port and starts the owned
// DNS inside the namespace.
func (r *run) jailServices() error {
	j := r.j
	pub, priv := r.at(r.outer, hostPublic).String(), r.at(r.outer, hostPrivate).String()
	serve := func(ln net.Listener, name string) {
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: hitHandler(name, j.record)}
		j.servers = append(j.servers, srv)
		go srv.Serve(ln)
	}
	for _, a := range []string{pub + ":8080", pub + ":8081", priv + ":8080"} {
		ln, err := j.top.listenTCP(a)
		if err != nil {
			return err
		}
		serve(ln, a)
	}
	loop, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	j.loopPort = uint16(loop.Addr().(*net.TCPAddr).Port)
	serve(loop, loop.Addr().String())
	if j.guardPort, err = freeLoopbackPort(); err != nil {
		return err
	}
	z := &zone{all: answers{}, flip: answers{}}
	records := []string{
		admitted + "=" + pub, denied + "=" + pub, denyIDNA + "=" + pub,
		"web.target.test=" + pub, "x." + admitted + "=" + pub, "xapi.target.test=" + pub, "target.test=" + pub,
		privName + "=" + priv, multiName + "=" + pub + "," + priv, loopName + "=127.0.0.1", deadName + "=" + pub,
		selfName + "=127.0.0.1",
	}
	for _, a := range records {
		if err := z.all.Set(a); err != nil {
			return err
		}
	}
	if err := z.flip.Set(flipName + "=" + pub + "," + priv); err != nil {
		return err
	}
	if err := z.sentinel.Set(tunnelZone + "=" + r.at(r.outer, hostSentinel).String()); err != nil {
		return err
	}
	r.topo["dns"] = append(records, "flip "+flipName+"="+pub+","+priv, "sentinel *."+tunnelZone+"="+r.at(r.outer, hostSentinel).String())
	r.topo["loopback_listener"] = loop.Addr().String()
	pc, err := j.top.listenUDP(netip.AddrPortFrom(r.at(r.outer, hostDNS), 53).String())
	if err != nil {
		return err
	}
	go serveDNS(pc, z, &j.dnsLog)
	return nil
}

// maxGuardPortTries bounds the picks of the guard's port.
const maxGuardPortTries = 3

// freeLoopbackPort returns a TCP port of the host's loopback that was
// free a moment ago.
func freeLoopbackPort() (uint16, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return uint16(ln.Addr().(*net.TCPAddr).Port), nil
}

// jailHostAddrs returns the addresses the default_deny host cases try:
// the host's own IPv4 addresses in testRange (the veth's host end among
// them) and the host's loopback, which in a jail is the jail's own.
func (r *run) jailHostAddrs() []netip.Addr {
	out := []netip.Addr{r.at(r.outer, nsTopoHost)}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		if ip := p.Addr().Unmap(); ip.Is4() && testRange.Contains(ip) && ip != out[0] {
			out = append(out, ip)
		}
	}
	out = append(out, netip.MustParseAddr("127.0.0.1"))
	r.topo["host_addresses"] = out
	return out
}

// observeJail runs the workload's probe in an allowlist jail, reads the
// jail's process from /proc while it waits for its checks, and collects
// what the listeners and the DNS recorded.
func (r *run) observeJail(ctx context.Context, inst adapters.Instance) error {
	checks := r.checks()
	body, _ := json.Marshal(checks)
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{jailBinary, "matrix", "tool", "probe"}, Env: []string{markerEnv + "=" + r.nonce}})
	if err != nil {
		return err
	}
	r.j.wl, r.j.wlErr = readProcView(markerEnv + "=" + r.nonce)
	if r.j.wlErr == nil {
		r.j.wlFiles = r.scanJail(r.j.wl.PID, jail.WorkspacePath, "/tmp", jail.BindRoot)
	}
	if err := r.exchange(proc, body, len(checks)); err != nil {
		return err
	}
	r.j.mu.Lock()
	r.hits = append(r.hits, r.j.hits...)
	r.j.mu.Unlock()
	return nil
}

// A procView is a jail's process as the host's /proc shows it.
type procView struct {
	PID     int      `json:"pid"`
	Env     []string `json:"env"`
	Cmdline []string `json:"cmdline"`
	// Mounts are the mount points of its mount namespace, with whether
	// each is writable, and what each shows of the host (its root
	// within the source file system).
	Mounts []procMount `json:"mounts"`
	// Interfaces are the network interfaces of its network namespace.
	Interfaces []string `json:"interfaces"`
	// NetNS is its network namespace; HostNetNS the host's.
	NetNS     string `json:"netns"`
	HostNetNS string `json:"host_netns"`
}

type procMount struct {
	Point  string `json:"point"`
	Root   string `json:"root"`
	Source string `json:"source"`
	FSType string `json:"fstype"`
	RW     bool   `json:"rw"`
}

// maxProcScan bounds the processes readProcView looks at.
const maxProcScan = 1 << 16

// readProcView finds the one process whose environment holds marker
// and reads it.
func readProcView(marker string) (procView, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return procView{}, err
	}
	found := 0
	for i, e := range ents {
		if i > maxProcScan {
			break
		}
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte("\x00"+marker+"\x00")) && !bytes.HasPrefix(env, []byte(marker+"\x00")) {
			continue
		}
		found = pid
		break
	}
	if found == 0 {
		return procView{}, checkfu.Refuse(CodeProbeFailed, "matrix: no process holds the run's marker")
	}
	return procViewOf(found)
}

func procViewOf(pid int) (procView, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	v := procView{PID: pid}
	split := func(b []byte) []string {
		var out []string
		for _, s := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
			out = append(out, string(s))
		}
		return out
	}
	env, err := os.ReadFile(dir + "/environ")
	if err != nil {
		return v, err
	}
	v.Env = split(env)
	cmd, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return v, err
	}
	v.Cmdline = split(cmd)
	mi, err := os.ReadFile(dir + "/mountinfo")
	if err != nil {
		return v, err
	}
	sc := bufio.NewScanner(bytes.NewReader(mi))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(f) < 6 || sep < 0 || sep+2 >= len(f) {
			continue
		}
		v.Mounts = append(v.Mounts, procMount{Point: f[4], Root: f[3], FSType: f[sep+1], Source: f[sep+2], RW: strings.HasPrefix(f[5], "rw")})
	}
	dev, err := os.ReadFile(dir + "/net/dev")
	if err != nil {
		return v, err
	}
	for _, line := range strings.Split(string(dev), "\n") {
		if name, _, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, "|") {
			v.Interfaces = append(v.Interfaces, strings.TrimSpace(name))
		}
	}
	v.NetNS, _ = os.Readlink(dir + "/ns/net")
	v.HostNetNS, _ = os.Readlink("/proc/self/ns/net")
	return v, nil
}

// maxScanFiles bounds the files one jail scan reads.
const maxScanFiles = 4096

// scanJail reads the regular files under paths of the jail of pid,
// through /proc/PID/root, and records which hold the canary.
func (r *run) scanJail(pid int, paths ...string) scan {
	sc := scan{Paths: paths}
	canary := []byte(r.cfg.PlaneCredential)
	root := "/proc/" + strconv.Itoa(pid) + "/root"
	for _, p := range paths {
		err := filepath.WalkDir(root+p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() || sc.Files >= maxScanFiles {
				return nil
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			b, err := io.ReadAll(io.LimitReader(f, maxScanFile))
			if err != nil {
				return err
			}
			sc.Files++
			sc.Bytes += int64(len(b))
			if bytes.Contains(b, canary) {
				sc.Found = append(sc.Found, strings.TrimPrefix(path, root))
			}
			return nil
		})
		if err != nil {
			sc.Err = err.Error()
		}
	}
	return sc
}

// jailDevices are the device nodes of a jail's minimal /dev.
var jailDevices = map[string]bool{"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true, "/dev/urandom": true, "/dev/tty": true}

// jailWritable reports whether m may be writable in a jail: the
// workspace, a file system of the jail's own (a tmpfs, the /proc of its
// PID namespace) or a node of its minimal /dev; no host directory
// besides the workspace.
func jailWritable(m procMount) bool {
	switch {
	case m.Point == jail.WorkspacePath, m.FSType == "tmpfs" && m.Root == "/", m.FSType == "proc" && m.Point == "/proc":
		return true
	case m.FSType == "devtmpfs":
		return jailDevices[m.Point] && m.Root == strings.TrimPrefix(m.Point, "/dev")
	}
	return false
}

// judgeProcView judges a jail's process as /proc shows it: the canary is
// absent from its environment, command line and mounts, and only the
// workspace and the private temporary directories are writable.
func judgeProcView(get func(*run) (procView, error)) func(*run, *spec) (Verdict, string, map[string]any) {
	return func(r *run, s *spec) (Verdict, string, map[string]any) {
		v, err := get(r)
		if err != nil || v.PID == 0 {
			return Unestablished, fmt.Sprintf("the jail's process could not be read: %v", err), nil
		}
		canary := r.cfg.PlaneCredential
		ev := map[string]any{"process": redactProc(v, canary)}
		where := ""
		for _, e := range v.Env {
			if strings.Contains(e, canary) {
				where = "environment"
			}
		}
		for _, a := range v.Cmdline {
			if strings.Contains(a, canary) {
				where = "command line"
			}
		}
		for _, m := range v.Mounts {
			if strings.Contains(m.Point+m.Root+m.Source, canary) {
				where = "mounts"
			}
			if m.RW && !jailWritable(m) {
				return Fail, "mount " + m.Point + " is writable", ev
			}
		}
		if where != "" {
			return Fail, "the canary plane credential is in the " + where, ev
		}
		return Pass, fmt.Sprintf("the canary is absent from %d environment entries, %d arguments and %d mounts; only the workspace and the jail's own file systems are writable", len(v.Env), len(v.Cmdline), len(v.Mounts)), ev
	}
}

// redactProc is redact for a procView.
func redactProc(v procView, canary string) procView {
	rep := strings.NewReplacer(canary, "<canary>")
	env := make([]string, len(v.Env))
	for i, e := range v.Env {
		name, val, _ := strings.Cut(e, "=")
		env[i] = name + "=" + conformance.DigestOf([]byte(val)).String()
	}
	v.Env = env
	cmd := make([]string, len(v.Cmdline))
	for i, a := range v.Cmdline {
		cmd[i] = rep.Replace(a)
	}
	v.Cmdline = cmd
	return v
}

// judgeGuardCompiled judges what the Runner compiled for the jail's
// guard: its options and allowlist, and what it logged.
func judgeGuardCompiled(r *run, s *spec) (Verdict, string, map[string]any) {
	opts, _ := json.Marshal(r.j.guardOpts)
	ev := map[string]any{"guard": json.RawMessage(strings.ReplaceAll(string(opts), r.cfg.PlaneCredential, "<canary>"))}
	switch {
	case bytes.Contains(opts, []byte(r.cfg.PlaneCredential)):
		return Fail, "the canary plane credential is in what the Runner compiled for the guard", ev
	case strings.Contains(r.guardLogs, r.cfg.PlaneCredential):
		return Fail, "the canary plane credential is in the guard's log", ev
	}
	return Pass, fmt.Sprintf("the canary is absent from the guard's options (%d bytes) and its log (%d bytes)", len(opts), len(r.guardLogs)), ev
}

// observeJailBroker is observeBroker on the jail: the capability-enabled
// workload runs in a jail of network mode none with the broker's
// directory bound, opened over acp/wire by a wire server whose command
// (jailproc, this binary) makes the jail. A failure is recorded, not
// returned.
func (r *run) observeJailBroker(ctx context.Context) {
	r.planeErr = func() error {
		pl, err := startPlane(r.cfg.PlaneCredential)
		if err != nil {
			return err
		}
		r.plane = pl
		defer pl.close()
		marker := "broker-" + r.nonce
		return r.overWireRun(ctx, func() []string {
			return []string{"matrix", "tool", "jailproc", "-binary", r.cfg.Binary, "-broker", pl.dir, "-marker", marker, "--",
				jailBinary, "matrix", "tool", "mcp", jail.BrokerMount + "/broker.sock", planeTool}
		}, func(string) error {
			var err error
			r.j.brokerPV, err = readProcView(markerEnv + "=" + marker)
			return err
		}, pl)
	}()
}

// jailProc is the provider side of a jail process opened over acp/wire:
// it runs its argv in a fresh jail of network mode none with -broker
// bound and -binary at jailBinary, names -marker on stderr once the
// process runs, and passes stdio through.
func jailProc(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flagSet("jailproc")
	binary := fs.String("binary", "", "the checkfu binary")
	brokerDir := fs.String("broker", "", "broker directory")
	marker := fs.String("marker", "", "the process's marker")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	p, err := jail.New(jail.Config{Binds: []jail.Bind{{Source: *binary, Target: jailBinary}}})
	if err != nil {
		return err
	}
	inst, err := p.CreateWithBroker(ctx, p.Spec("matrix-broker", jailProfileDigest), *brokerDir)
	if err != nil {
		return err
	}
	defer inst.Destroy(context.Background())
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: fs.Args(), Env: []string{markerEnv + "=" + *marker}})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s%s\n", containerLine, *marker)
	return pipeProcess(proc.Stdin(), proc.Stdout(), proc.Stderr(), proc.Wait, stdin, stdout, stderr)
}

// judgeTunnelJail judges the jail's loopback_dns_tunnel case: each
// question the workload sent to a loopback resolver address is judged
// as host_dns_tunnel judges the embedded DNS's, against the same
// control (the host asking the owned DNS); the worst verdict stands.
func judgeTunnelJail(r *run, s *spec) (Verdict, string, map[string]any) {
	v, why := Pass, ""
	ev := map[string]any{"control": map[string]any{"name": r.controlName(), "seen": r.dnsControl, "owned_dns_saw_it": r.asked(r.controlName())},
		"sentinel": r.at(r.outer, hostSentinel).String()}
	rank := map[Verdict]int{Pass: 0, Unestablished: 1, Fail: 2}
	for _, c := range s.checks {
		obs := tunnelObs{
			Name: c.Name, Seen: r.seen[c.ID], Asked: r.asked(c.Name),
			ControlName: r.controlName(), Control: r.dnsControl, ControlAsked: r.asked(r.controlName()),
			ControlRan: r.dnsControl.ID != "", Sentinel: r.at(r.outer, hostSentinel).String(),
		}
		cv, cwhy := tunnelVerdict(obs)
		if why == "" || rank[cv] > rank[v] {
			v, why = cv, c.Addr+": "+cwhy
		}
	}
	return v, why, ev
}

// judgeRoutesJail is separate_routes on the jail: plane traffic reached
// the provider from the host's loopback and never crossed the guard, the
// guarded jail reached no host address, and the capability-enabled jail
// has a network namespace of its own holding loopback alone.
func judgeRoutesJail(r *run, s *spec) (Verdict, string, map[string]any) {
	b := r.j.brokerPV
	ev := map[string]any{
		"workload_interfaces": r.j.wl.Interfaces, "workload_netns": r.j.wl.NetNS, "broker_workload_interfaces": b.Interfaces,
		"broker_workload_netns": b.NetNS, "host_netns": b.HostNetNS,
		"host_listener_contacts": r.host.from(""), "provider_received": r.planeHits,
		"guard_log_names_plane": strings.Contains(r.guardLogs, planeHost),
	}
	if r.planeErr != nil || len(r.planeHits) == 0 || b.PID == 0 || r.j.wl.PID == 0 {
		return Unestablished, "no plane traffic to observe", ev
	}
	for _, h := range r.planeHits {
		ap, err := netip.ParseAddrPort(h.From)
		if err != nil || !ap.Addr().IsLoopback() {
			return Fail, "plane traffic reached the provider from " + h.From + ", not the plane's own route", ev
		}
	}
	switch {
	case strings.Contains(r.guardLogs, planeHost):
		return Fail, "the guard's log names the plane's provider: plane traffic rode the guard", ev
	case len(r.host.from("")) > 0:
		return Fail, "the guarded jail reached the host, where the plane's edge runs", ev
	case b.NetNS == "" || b.NetNS == b.HostNetNS || !slices.Equal(b.Interfaces, []string{"lo"}):
		return Fail, fmt.Sprintf("the capability-enabled jail has network namespace %s (the host's: %s) with %v, not its own with loopback alone", b.NetNS, b.HostNetNS, b.Interfaces), ev
	case r.j.wl.NetNS == "" || r.j.wl.NetNS == b.HostNetNS || !slices.Equal(r.j.wl.Interfaces, []string{"lo"}):
		return Fail, fmt.Sprintf("the guarded jail has network namespace %s (the host's: %s) with %v, not its own with loopback alone", r.j.wl.NetNS, b.HostNetNS, r.j.wl.Interfaces), ev
	}
	return Pass, "plane traffic left from the host's loopback and never crossed the guard; the guarded jail's network namespace holds loopback alone and reached no host address; the capability-enabled jail's holds loopback alone, with only the broker's socket bound", ev
}
