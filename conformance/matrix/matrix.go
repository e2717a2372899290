package matrix

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// PlaneCredentialEnv is the environment variable in which a Runner process
// holds the canary plane credential during a matrix run: the place a
// Runner that leaks its own environment into what it compiles would leak
// it from. The authority_separation cases look for the canary everywhere
// the Runner compiled.
const PlaneCredentialEnv = "CHECKFU_PLANE_CREDENTIAL"

// A Verdict is what one case observed.
type Verdict string

// The verdicts. A fact holds only when every one of its cases passed.
const (
	// Pass: the case observed what the fact requires.
	Pass Verdict = "pass"
	// Fail: the case observed a violation (something reached a live
	// listener it must not, or a canary was found).
	Fail Verdict = "fail"
	// Unestablished: the case could not be observed on this topology or
	// this tree; the fact is not held, and nothing was violated.
	Unestablished Verdict = "unestablished"
)

// A Case is the outcome of one adversarial case of one fact.
type Case struct {
	Fact    conformance.Fact `json:"fact"`
	Name    string           `json:"name"`
	Verdict Verdict          `json:"verdict"`
	// Why says, in one line, what was observed.
	Why string `json:"why"`
	// Evidence is the recorded observation: what was sent, what the
	// workload saw, what reached the live listeners.
	Evidence json.RawMessage `json:"evidence"`
	// Digest is the SHA-256 of Evidence; it goes into the statement.
	Digest conformance.Digest `json:"digest"`
}

// A Report is one matrix run.
type Report struct {
	Target checkfu.ProviderRevision `json:"-"`
	// Provider and Revision spell Target in the evidence file.
	Provider string `json:"provider"`
	Revision string `json:"provider_revision"`
	// Label is always checkfu.LabelIsolated: the matrix owns the
	// topology, so its evidence is isolated, never production.
	Label     string             `json:"label"`
	Started   time.Time          `json:"started"`
	WallTime  string             `json:"wall_time"`
	Engine    string             `json:"engine"`
	Slot      int                `json:"slot"`
	Topology  json.RawMessage    `json:"topology"`
	TopoSum   conformance.Digest `json:"topology_digest"`
	Cases     []Case             `json:"cases"`
	wallClock time.Duration
}

// Held returns the facts every case of which passed.
func (r *Report) Held() conformance.FactSet {
	var held []conformance.Fact
	for _, f := range conformance.Facts() {
		n, ok := 0, true
		for _, c := range r.Cases {
			if c.Fact == f {
				n++
				ok = ok && c.Verdict == Pass
			}
		}
		if n > 0 && ok {
			held = append(held, f)
		}
	}
	s, _ := conformance.NewFactSet(held...)
	return s
}

// Wall returns how long the run took, topology included.
func (r *Report) Wall() time.Duration { return r.wallClock }

// Record returns the statement's record: the held facts, label
// isolated, issued at issued, with the topology's digest and every case's
// digest as evidence.
func (r *Report) Record(issued time.Time) (conformance.Record, error) {
	rec := conformance.Record{Target: r.Target, Facts: r.Held(), Label: checkfu.LabelIsolated, IssuedAt: issued.UTC().Truncate(time.Second)}
	seen := map[conformance.Digest]bool{r.TopoSum: true}
	rec.Evidence = append(rec.Evidence, r.TopoSum)
	for _, c := range r.Cases {
		if !seen[c.Digest] {
			seen[c.Digest] = true
			rec.Evidence = append(rec.Evidence, c.Digest)
		}
	}
	return rec, rec.Check()
}

// Config configures [Run].
type Config struct {
	// Engine is the Docker engine the topology is built on. Required.
	Engine *docker.Engine
	// Binary is a static linux checkfu binary (CGO_ENABLED=0): it runs
	// the guard, the owned DNS, the listeners and the probe. Required.
	Binary string
	// Target is the provider revision the statement is about. Required.
	Target checkfu.ProviderRevision
	// PlaneCredential is the canary plane credential, which the caller
	// holds where a Runner holds plane credentials (the CLI: its own
	// environment, as PlaneCredentialEnv). At least 16 bytes. Required.
	PlaneCredential string
	// Slot is the topology slot (docker.MinSlot..MaxSlot); 0 picks a free
	// one.
	Slot int
	// Label is the KEY=VALUE label the provider side of the acp/wire
	// hop puts on what it creates; empty means docker.DefaultLabel.
	Label string
	// Progress, when set, is called once per case as its verdict is
	// known, in the order the cases are listed.
	Progress func(Case)
}

// The fixed layout of the owned topology, as the last byte of an
// address on the outer network.
const (
	hostPublic  = 3  // the public-looking target: listeners on 8080 and 8081
	hostPrivate = 5  // a private address with a live listener on 8080
	hostDNS     = 53 // the owned DNS server
	// hostControl is the DNS control: a container on the outer network
	// whose embedded DNS's upstream is the owned DNS.
	hostControl = 54
	// hostSentinel is the address the owned DNS answers for every name
	// under tunnelZone; nothing listens there.
	hostSentinel = 99
)

// tunnelZone is the zone of the names the host_dns_tunnel case asks: the
// owned DNS answers every name under it with the sentinel address, so a
// forwarded question is seen both in its log and in the asker's answer.
const tunnelZone = "tunnel.test"

// The names the owned DNS answers.
const (
	admitted  = "api.target.test"
	denied    = "other.test"
	denyIDNA  = "xn--ther-4qa.test" // IDNA of öther.test
	privName  = "priv.target.test"
	flipName  = "flip.target.test"
	multiName = "multi.target.test"
	loopName  = "loop.target.test"
	deadName  = "dead.target.test"
	selfName  = "self.target.test" // answered with the guard's own inner address
)

// policyFor is the guard's allowlist: only names the owned DNS answers.
func policyFor() []byte {
	hosts := []string{admitted + ":8080", privName + ":8080", flipName + ":8080", multiName + ":8080", loopName + ":8080", deadName + ":8082", selfName + ":3128"}
	b, _ := json.Marshal(map[string]any{"type": "allowlist", "allowed_hosts": hosts})
	return b
}

// A run holds one matrix run's topology and observations.
type run struct {
	cfg           Config
	top           *docker.Allowlist
	inner         netip.Prefix
	outer         netip.Prefix
	guard         netip.AddrPort
	workload      netip.Addr
	host          *hostListener
	dns           *docker.Service
	listeners     []*docker.Service
	topo          map[string]any
	guardView     docker.ContainerView
	wlView        docker.ContainerView
	wlViewErr     error
	guardFiles    scan
	wlFiles       scan
	seen          map[string]Seen
	hits          []Hit
	queries       []string
	plane         *plane
	planeErr      error // why the plane or its workload could not be observed
	brokerView    docker.ContainerView
	brokerViewErr error
	overWire      bool // the broker workload's process was opened over acp/wire
	brokerSeen    BrokerSeen
	brokerOut     []byte // the capability-enabled workload's stdout
	planeHits     []planeHit
	guardLogs     string
	nonce         string     // random label for names that must never reach the owned DNS
	dnsControl    Seen       // what the DNS control's probe saw
	dnsControlErr error      // why the DNS control could not run
	cached        []*spec    // specs' answer
	j             *jailState // the network-namespace variant's; nil on Docker
}

func (r *run) at(p netip.Prefix, n byte) netip.Addr {
	b := p.Addr().As4()
	b[3] = n
	return netip.AddrFrom4(b)
}

func (r *run) outerAt(n byte, port uint16) string {
	return netip.AddrPortFrom(r.at(r.outer, n), port).String()
}

// Run builds the owned topology, runs every case of the five facts
// against it, removes everything it created, and reports what it
// observed. An error means the matrix could not observe (the topology did
// not come up, the probe did not run); a fact that does not hold is a
// [Report] with a failing or unestablished case, not an error.
func Run(ctx context.Context, cfg Config) (_ *Report, err error) {
	if cfg.Target.Provider == JailProvider {
		if cfg.Binary == "" || cfg.Target.Revision == "" {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "matrix: a run needs a checkfu binary and a provider revision")
		}
		if len(cfg.PlaneCredential) < 16 {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "matrix: the canary plane credential must be at least 16 bytes")
		}
		return runJail(ctx, cfg)
	}
	if cfg.Engine == nil || cfg.Binary == "" || cfg.Target.Provider == "" || cfg.Target.Revision == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "matrix: a run needs an engine, a checkfu binary and a provider revision")
	}
	if len(cfg.PlaneCredential) < 16 {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "matrix: the canary plane credential must be at least 16 bytes")
	}
	start := time.Now()
	r := &run{cfg: cfg, topo: map[string]any{}, nonce: NewCanary()[len("cfcanary-"):]}
	tools, err := cfg.Engine.BusyboxImage(ctx, docker.ImageOptions{Binaries: map[string]string{"/usr/local/bin/checkfu": cfg.Binary}})
	if err != nil {
		return nil, err
	}
	guardImg, err := cfg.Engine.GuardImage(ctx, cfg.Binary)
	if err != nil {
		return nil, err
	}
	if r.host, err = listenHost(); err != nil {
		return nil, &checkfu.Refusal{Code: CodeTopologyFailed, Message: "matrix: host listener", Err: err}
	}
	defer r.host.close()
	if err := r.up(ctx, guardImg); err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if cerr := r.top.Close(cctx); cerr != nil && err == nil {
			err = &checkfu.Refusal{Code: CodeTopologyFailed, Message: "matrix: removing the topology", Err: cerr}
		}
	}()
	if err := r.services(ctx, tools); err != nil {
		return nil, err
	}
	if err := r.liveness(ctx); err != nil {
		return nil, err
	}
	r.observeDNSControl(ctx, tools)
	if err := r.observe(ctx, tools); err != nil {
		return nil, err
	}
	r.observeBroker(ctx, tools)
	topo, _ := json.Marshal(r.topo)
	rep := &Report{
		Target: cfg.Target, Provider: cfg.Target.Provider, Revision: cfg.Target.Revision,
		Label: checkfu.LabelIsolated.String(), Started: start.UTC(), Engine: cfg.Engine.EngineVersion(),
		Slot: r.slotOf(), Topology: topo, TopoSum: conformance.DigestOf(topo),
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

func (r *run) slotOf() int { return int(r.inner.Addr().As4()[2]) / 2 }

// up builds the allowlist topology in the first free slot.
func (r *run) up(ctx context.Context, guardImg string) error {
	first, n := r.cfg.Slot, 1
	if first == 0 {
		first, n = docker.MinSlot+os.Getpid()%(docker.MaxSlot-docker.MinSlot+1), docker.MaxSlot-docker.MinSlot+1
	}
	for i := 0; i < n; i++ {
		slot := docker.MinSlot + (first-docker.MinSlot+i)%(docker.MaxSlot-docker.MinSlot+1)
		outer := netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(2*slot + 1), 0}), 24)
		r.outer = outer
		top, err := r.cfg.Engine.NewAllowlist(ctx, docker.AllowlistConfig{
			Slot: slot, Policy: policyFor(), GuardImage: guardImg,
			Resolver:                netip.AddrPortFrom(r.at(outer, hostDNS), 53).String(),
			TreatAsPublicForTesting: []netip.Prefix{netip.PrefixFrom(r.at(outer, hostPublic), 32)},
		})
		if errors.Is(err, docker.CodeEngineNameConflict) {
			continue
		}
		if err != nil {
			return err
		}
		r.top, r.inner, r.guard, r.workload = top, top.Inner(), top.GuardAddr(), top.WorkloadAddr()
		r.topo["inner"], r.topo["outer"], r.topo["guard"], r.topo["workload"] = r.inner.String(), outer.String(), r.guard.String(), r.workload.String()
		r.topo["policy"] = json.RawMessage(policyFor())
		r.topo["treat_as_public"] = []string{netip.PrefixFrom(r.at(outer, hostPublic), 32).String()}
		return nil
	}
	return checkfu.Refuse(CodeTopologyFailed, "matrix: no free topology slot")
}

// services starts the owned DNS and the live listeners.
func (r *run) services(ctx context.Context, tools string) error {
	pub, priv := r.at(r.outer, hostPublic).String(), r.at(r.outer, hostPrivate).String()
	records := []string{
		admitted + "=" + pub, denied + "=" + pub, denyIDNA + "=" + pub,
		"web.target.test=" + pub, "x." + admitted + "=" + pub, "xapi.target.test=" + pub, "target.test=" + pub,
		privName + "=" + priv, multiName + "=" + pub + "," + priv, loopName + "=127.0.0.1", deadName + "=" + pub,
		selfName + "=" + r.guard.Addr().String(),
	}
	dnsCmd := []string{"/usr/local/bin/checkfu", "matrix", "tool", "dnsd", "-listen", ":53", "-flip", flipName + "=" + pub + "," + priv,
		"-sentinel", tunnelZone + "=" + r.at(r.outer, hostSentinel).String()}
	for _, a := range records {
		dnsCmd = append(dnsCmd, "-a", a)
	}
	r.topo["dns"] = append(records, "flip "+flipName+"="+pub+","+priv, "sentinel *."+tunnelZone+"="+r.at(r.outer, hostSentinel).String())
	tool := func(args ...string) []string {
		return append([]string{"/usr/local/bin/checkfu", "matrix", "tool", "listen"}, args...)
	}
	specs := []docker.ServiceSpec{
		{Name: "dns", Image: tools, Network: docker.ServiceOuter, IP: r.at(r.outer, hostDNS), Cmd: dnsCmd, Ready: "listening on"},
		{Name: "public", Image: tools, Network: docker.ServiceOuter, IP: r.at(r.outer, hostPublic), Ready: "listening on",
			Cmd: tool("-http", pub+":8080", "-http", pub+":8081")},
		{Name: "private", Image: tools, Network: docker.ServiceOuter, IP: r.at(r.outer, hostPrivate), Ready: "listening on",
			Cmd: tool("-http", priv+":8080")},
		{Name: "loopback", Image: tools, Network: docker.ServiceGuardNetns, Ready: "listening on",
			Cmd: tool("-http", "127.0.0.1:8080")},
	}
	svcs := make([]*docker.Service, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Add(1)
		go func() { defer wg.Done(); svcs[i], errs[i] = r.top.StartService(ctx, s) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return &checkfu.Refusal{Code: CodeTopologyFailed, Message: "matrix: starting the owned DNS and listeners", Err: err}
	}
	r.dns, r.listeners = svcs[0], svcs[1:]
	return nil
}

// liveness proves, from the host, that every outer listener accepts: a
// refusal below is then policy, never a dead port.
func (r *run) liveness(ctx context.Context) error {
	var got []string
	for _, a := range []string{r.outerAt(hostPublic, 8080), r.outerAt(hostPublic, 8081), r.outerAt(hostPrivate, 8080)} {
		st := httpDirect(ctx, a, "/c/liveness")
		got = append(got, fmt.Sprintf("%s %d %s", a, st.Status, st.Err))
		if st.Status != 200 {
			return checkfu.Refuse(CodeTopologyFailed, "matrix: live listener %s did not answer the host's liveness control (%d %s)", a, st.Status, st.Err)
		}
	}
	r.topo["liveness"] = got
	return nil
}

// controlName is the name the DNS control asks: under tunnelZone, unique
// to the run, and not the workload's.
func (r *run) controlName() string { return "control-" + r.nonce + "." + tunnelZone }

// observeDNSControl runs the DNS control: a container on the outer
// network (where a route to the owned DNS exists) whose embedded DNS's
// upstream is the owned DNS, asking its 127.0.0.11 the control's name
// once. Its embedded DNS forwards, so the owned DNS must log the name and
// the control must get the sentinel back: the proof that the
// host_dns_tunnel observation can see a forward. A failure is recorded,
// not returned: the case is then unestablished.
func (r *run) observeDNSControl(ctx context.Context, tools string) {
	dns := r.at(r.outer, hostDNS)
	r.topo["dns_control"] = map[string]any{
		"network": r.top.OuterNetwork(), "address": r.at(r.outer, hostControl).String(),
		"embedded_dns_upstream": dns.String(), "name": r.controlName(),
	}
	r.dnsControlErr = func() error {
		svc, err := r.top.StartService(ctx, docker.ServiceSpec{
			Name: "dns-control", Image: tools, Network: docker.ServiceOuter, IP: r.at(r.outer, hostControl),
			DNS: []netip.Addr{dns}, Ready: askedLine,
			Cmd: []string{"/usr/local/bin/checkfu", "matrix", "tool", "ask", "-id", "dd-dns-control", "-server", "127.0.0.11:53", "-name", r.controlName()},
		})
		if err != nil {
			return err
		}
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			svc.Close(cctx)
			cancel()
		}()
		logs, err := svc.Logs(ctx)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(logs, "\n") {
			if js, ok := strings.CutPrefix(line, seenPrefix); ok {
				return json.Unmarshal([]byte(js), &r.dnsControl)
			}
		}
		return checkfu.Refuse(CodeProbeFailed, "matrix: the DNS control logged no observation: %s", checkfu.Quote(logs))
	}()
}

// observe runs the workload's probe once, with every check, and collects
// what the listeners, the DNS and the engine recorded.
func (r *run) observe(ctx context.Context, tools string) error {
	inst, err := r.cfg.Engine.CreateInstance(ctx, docker.InstanceConfig{Image: tools, Allowlist: r.top})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		inst.Destroy(cctx)
		cancel()
	}()
	checks := r.checks()
	body, _ := json.Marshal(checks)
	p, err := inst.Open(ctx, docker.ProcessSpec{Argv: []string{"/usr/local/bin/checkfu", "matrix", "tool", "probe"}})
	if err != nil {
		return err
	}
	// The probe waits for its checks on stdin: inspect it first, as the
	// Runner compiled it and while it lives.
	id := p.Evidence().Container
	r.wlView, r.wlViewErr = r.cfg.Engine.Inspect(ctx, id)
	r.wlFiles = r.scanFiles(ctx, id, "/etc", "/tmp", "/workspace")
	if err := r.exchange(p, body, len(checks)); err != nil {
		return err
	}
	// What the listeners recorded.
	for _, l := range r.listeners {
		logs, err := l.Logs(ctx)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(logs, "\n") {
			if js, ok := strings.CutPrefix(line, hitPrefix); ok {
				var h Hit
				if json.Unmarshal([]byte(js), &h) == nil {
					r.hits = append(r.hits, h)
				}
			}
		}
	}
	logs, err := r.dns.Logs(ctx)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(logs, "\n") {
		if q, ok := strings.CutPrefix(line, "query "); ok {
			r.queries = append(r.queries, q)
		}
	}
	if r.guardView, err = r.cfg.Engine.Inspect(ctx, r.top.GuardID()); err != nil {
		return err
	}
	r.guardFiles = r.scanFiles(ctx, r.top.GuardID(), "/etc", "/tmp")
	return nil
}

// observeBroker runs the plane (custody, edge, gateway, broker) and a
// capability-enabled workload that makes one credentialed call through
// the broker, and records what each side saw. A failure is recorded, not
// returned: the authority_separation cases that need it are then
// unestablished.
func (r *run) observeBroker(ctx context.Context, tools string) {
	r.planeErr = func() error {
		pl, err := startPlane(r.cfg.PlaneCredential)
		if err != nil {
			return err
		}
		r.plane = pl
		defer pl.close()
		return r.overWireRun(ctx, func() []string {
			return []string{"matrix", "tool", "dockerproc", "-image", tools, "-broker", pl.dir, "-label", r.cfg.Label, "--",
				"/usr/local/bin/checkfu", "matrix", "tool", "mcp", docker.BrokerMount + "/broker.sock", planeTool}
		}, func(id string) error {
			r.brokerView, r.brokerViewErr = r.cfg.Engine.Inspect(ctx, id)
			return r.brokerViewErr
		}, pl)
	}()
	r.guardLogs, _ = r.top.GuardLogs(ctx)
}

// overWireRun opens the capability-enabled workload's process over
// acp/wire: a wire server on a Unix socket whose command is this binary
// with args() (the provider side, its environment compiled here without
// the plane credential), and a wire.Runner that dials it. found is
// called with the instance's name once the provider side names it, and
// the workload's stdin ends after it. It records what the workload wrote
// and what the plane's provider received.
func (r *run) overWireRun(ctx context.Context, args func() []string, found func(id string) error, pl *plane) error {
	wdir, err := os.MkdirTemp("", "checkfu-matrix-wire-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(wdir)
	sock := filepath.Join(wdir, "wire.sock")
	ln, err := wire.Listen("unix", sock)
	if err != nil {
		return err
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, PlaneCredentialEnv+"=") {
			env = append(env, kv)
		}
	}
	srv := &wire.Server{Command: func() *exec.Cmd {
		cmd := exec.Command(r.cfg.Binary, args()...)
		cmd.Env = env
		return cmd
	}}
	go srv.Serve(ln)
	defer srv.Close()
	// The Runner side: the process, opened over acp/wire. Its stdin
	// ends once the instance has been inspected.
	inR, inW := io.Pipe()
	defer inW.Close()
	var out bytes.Buffer
	var foundErr error
	errw := &containerWatch{found: func(id string) {
		foundErr = found(id)
		inW.Close()
	}}
	runner := &wire.Runner{
		Dial:  func(ctx context.Context) (net.Conn, error) { var d net.Dialer; return d.DialContext(ctx, "unix", sock) },
		Stdin: inR, Stdout: &out, Stderr: errw,
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	code, werr := runner.Run(rctx)
	if werr != nil || code != 0 {
		return checkfu.Refuse(CodeProbeFailed, "matrix: the broker workload over acp/wire exited %d (%v): %s", code, werr, checkfu.Quote(errw.String()))
	}
	if foundErr != nil {
		return foundErr
	}
	r.overWire = true
	r.brokerOut = out.Bytes()
	if err := json.Unmarshal(out.Bytes(), &r.brokerSeen); err != nil {
		return checkfu.Refuse(CodeProbeFailed, "matrix: the broker workload wrote %s", checkfu.Quote(out.String()))
	}
	r.planeHits = pl.recorded()
	return nil
}

// hitsFor returns the hits whose path starts with /c/ID (and so carry
// that case's marker).
func (r *run) hitsFor(id string) []Hit {
	var out []Hit
	for _, h := range r.hits {
		p, _, _ := strings.Cut(h.Path, "?")
		if p == "/c/"+id {
			out = append(out, h)
		}
	}
	return out
}

// NewCanary returns a fresh canary plane credential.
func NewCanary() string {
	var b [16]byte
	rand.Read(b[:])
	return "cfcanary-" + hex.EncodeToString(b[:])
}

// VerifyEvidence checks an evidence file's digests: each case's digest,
// and the topology's, is the SHA-256 of the compact JSON of its evidence
// (the evidence file may be indented). It says nothing about which
// statement the file belongs to, and nothing outside the digests (the
// provider, label and verdicts) is covered: [MatchEvidence] binds a file
// to a record.
func VerifyEvidence(rep *Report) error {
	sum := func(raw json.RawMessage) (conformance.Digest, error) {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return conformance.Digest{}, err
		}
		return conformance.DigestOf(b.Bytes()), nil
	}
	if d, err := sum(rep.Topology); err != nil || d != rep.TopoSum {
		return checkfu.Refuse(conformance.CodeRecordInvalid, "matrix: the topology evidence does not match its digest")
	}
	for _, c := range rep.Cases {
		if d, err := sum(c.Evidence); err != nil || d != c.Digest {
			return checkfu.Refuse(conformance.CodeRecordInvalid, "matrix: the evidence of case %s does not match its digest", checkfu.Quote(c.Name))
		}
	}
	return nil
}

// MaxEvidenceFileSize bounds the evidence file [ParseEvidenceFile]
// reads, in bytes. A run of the matrix writes a few hundred KiB.
const MaxEvidenceFileSize = 16 << 20

// ParseEvidenceFile reads an evidence file strictly (internal/strictjson:
// one value, valid UTF-8, member names exactly the Report's and each
// once at every depth, at most [MaxEvidenceFileSize] bytes), so that no
// two readers of one file see different verdicts, and sets the Report's
// Target from the file's provider and revision. Anything else is refused
// with [CodeEvidenceFileInvalid]. The result is not yet trusted: match it
// with [MatchEvidence].
func ParseEvidenceFile(data []byte) (*Report, error) {
	var rep Report
	if err := strictjson.Unmarshal(data, &rep, strictjson.Options{MaxBytes: MaxEvidenceFileSize}); err != nil {
		return nil, &checkfu.Refusal{Code: CodeEvidenceFileInvalid, Message: "matrix: not a strict evidence file", Err: err}
	}
	rep.Target = checkfu.ProviderRevision{Provider: rep.Provider, Revision: rep.Revision}
	return &rep, nil
}

// MatchEvidence checks that rep is the evidence file of rec, the record
// of a statement or of a verified receipt (conformance.Receipt.Record):
// [VerifyEvidence] holds, the file names rec's exact provider revision
// (byte for byte) and label, its digests (the topology's, then each
// case's, each once, in file order, as [Report.Record] lists them) are
// exactly rec's evidence in order, and the facts its verdicts hold are
// exactly rec's. Anything else is refused with [CodeEvidenceFileMismatch]
// (or VerifyEvidence's refusal). The record is what is signed; the file
// is not, so a file matching the record is as trustworthy as the record's
// signer, and no more.
func MatchEvidence(rep *Report, rec conformance.Record) error {
	if err := VerifyEvidence(rep); err != nil {
		return err
	}
	if rep.Provider != rec.Target.Provider || rep.Revision != rec.Target.Revision {
		return checkfu.Refuse(CodeEvidenceFileMismatch, "matrix: the evidence is for %s, the record for %s",
			checkfu.Quote(rep.Provider+"@"+rep.Revision), checkfu.Quote(rec.Target.String()))
	}
	if rep.Label != rec.Label.String() {
		return checkfu.Refuse(CodeEvidenceFileMismatch, "matrix: the evidence is labelled %s, the record %s", checkfu.Quote(rep.Label), rec.Label)
	}
	seen := map[conformance.Digest]bool{rep.TopoSum: true}
	digests := []conformance.Digest{rep.TopoSum}
	for _, c := range rep.Cases {
		if !seen[c.Digest] {
			seen[c.Digest] = true
			digests = append(digests, c.Digest)
		}
	}
	if !slices.Equal(digests, rec.Evidence) {
		return checkfu.Refuse(CodeEvidenceFileMismatch, "matrix: the evidence file's %d digests are not the record's %d, in order", len(digests), len(rec.Evidence))
	}
	if held := rep.Held(); held != rec.Facts {
		return checkfu.Refuse(CodeEvidenceFileMismatch, "matrix: the evidence's verdicts hold %s, the record states %s", held, rec.Facts)
	}
	return nil
}

// containerWatch is the stderr of a process opened over acp/wire: it
// calls found with the container ID once dockerproc names it, and keeps
// the rest.
type containerWatch struct {
	found func(string)
	mu    sync.Mutex
	buf   bytes.Buffer // guarded by mu
	done  bool         // guarded by mu
}

func (w *containerWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(b)
	var id string
	if !w.done {
		if line, _, ok := strings.Cut(w.buf.String(), "\n"); ok {
			if s, ok := strings.CutPrefix(line, containerLine); ok {
				id, w.done = s, true
			}
		}
	}
	w.mu.Unlock()
	if id != "" {
		w.found(id)
	}
	return len(b), nil
}

func (w *containerWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// A probeProcess is the workload's probe as either topology opens it.
type probeProcess interface {
	Stdin() io.WriteCloser
	Stdout() io.Reader
	Stderr() io.Reader
	Wait() (int, error)
}

// exchange hands the probe its checks (body, the JSON of n checks) on
// stdin, waits for it to exit and reads what it observed into r.seen:
// one observation per check, or a refusal with [CodeProbeFailed].
func (r *run) exchange(p probeProcess, body []byte, n int) error {
	var out, errb bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); io.Copy(&out, p.Stdout()) }()
	go func() { defer wg.Done(); io.Copy(&errb, p.Stderr()) }()
	p.Stdin().Write(body)
	p.Stdin().Close()
	code, err := p.Wait()
	wg.Wait()
	if err != nil || code != 0 {
		return checkfu.Refuse(CodeProbeFailed, "matrix: the probe exited %d (%v): %s", code, err, checkfu.Quote(errb.String()))
	}
	var seen []Seen
	if err := json.Unmarshal(out.Bytes(), &seen); err != nil || len(seen) != n {
		return checkfu.Refuse(CodeProbeFailed, "matrix: the probe wrote %d observations for %d checks: %s", len(seen), n, checkfu.Quote(out.String()))
	}
	r.seen = map[string]Seen{}
	for _, s := range seen {
		r.seen[s.ID] = s
	}
	return nil
}
