package matrix

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"net/netip"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
)

// fakeJailRun is fakeRun on the namespace topology's layout.
func fakeJailRun() *run {
	r := fakeRun()
	r.outer = netip.MustParsePrefix("198.19.7.0/24")
	r.guard = netip.MustParseAddrPort("127.0.0.1:3128")
	r.inner, r.workload = netip.Prefix{}, netip.Addr{}
	r.j = &jailState{loopPort: 41000, guardPort: 42000, guardOpts: map[string]any{"resolver": "198.19.7.53:53"}}
	own := []procMount{{Point: "/", Root: "/", FSType: "tmpfs"}, {Point: "/usr", Root: "/usr", FSType: "ext4"},
		{Point: "/workspace", Root: "/tmp/checkfu-jail-1/workspace", FSType: "ext4", RW: true}, {Point: "/tmp", Root: "/", FSType: "tmpfs", RW: true},
		{Point: "/proc", Root: "/", FSType: "proc", RW: true}, {Point: "/dev/null", Root: "/null", FSType: "devtmpfs", RW: true}}
	r.j.wl = procView{PID: 10, Env: []string{"PATH=/usr/bin"}, Cmdline: []string{jailBinary, "matrix", "tool", "probe"}, Mounts: own,
		Interfaces: []string{"lo"}, NetNS: "net:[2]", HostNetNS: "net:[1]"}
	r.j.brokerPV = r.j.wl
	r.j.brokerPV.PID = 11
	r.j.brokerPV.NetNS = "net:[3]"
	r.overWire = true
	r.planeHits = []planeHit{{From: "127.0.0.1:5000", Path: "/v1/issues", CredentialAttached: true}}
	r.guardLogs = "level=INFO msg=refused host=other.test"
	return r
}

// jailControl records the host's DNS control: its question reached the
// owned DNS, which answered the sentinel.
func jailControl(r *run) {
	r.dnsControl = Seen{ID: "dd-dns-control", Reached: true, DNS: &DNSAnswer{RCode: "RCodeSuccess", A: []string{"198.19.7.99"}, Records: 1}}
	r.queries = append(r.queries, r.controlName()+" TypeA")
}

// TestJailJudges pins the jail variant's own judges on observations that
// hold and that violate their fact.
func TestJailJudges(t *testing.T) {
	tests := []struct {
		name  string
		cas   string
		edit  func(r *run)
		want  Verdict
		wantW string
	}{
		{"workload as compiled", "workload_compiled_environment", nil, Pass, ""},
		{"canary in the workload's environment", "workload_compiled_environment", func(r *run) {
			r.j.wl.Env = append(r.j.wl.Env, PlaneCredentialEnv+"="+r.cfg.PlaneCredential)
		}, Fail, "environment"},
		{"canary on the workload's command line", "workload_compiled_environment", func(r *run) {
			r.j.wl.Cmdline = append(r.j.wl.Cmdline, r.cfg.PlaneCredential)
		}, Fail, "command line"},
		{"a host path bound writable", "workload_compiled_environment", func(r *run) {
			r.j.wl.Mounts = append(r.j.wl.Mounts, procMount{Point: jailBinary, Root: "/tmp/checkfu", FSType: "ext4", RW: true})
		}, Fail, "writable"},
		{"a host device bound writable", "workload_compiled_environment", func(r *run) {
			r.j.wl.Mounts = append(r.j.wl.Mounts, procMount{Point: "/dev/null", Root: "/sda", FSType: "devtmpfs", RW: true})
		}, Fail, "writable"},
		{"the workload unread", "workload_compiled_environment", func(r *run) { r.j.wl = procView{}; r.j.wlErr = os.ErrNotExist }, Unestablished, ""},
		{"canary in the broker jail's environment", "broker_workload_compiled_environment", func(r *run) {
			r.j.brokerPV.Env = append(r.j.brokerPV.Env, "X="+r.cfg.PlaneCredential)
		}, Fail, "environment"},
		{"guard options clean", "guard_compiled_options", nil, Pass, ""},
		{"canary in the guard's options", "guard_compiled_options", func(r *run) { r.j.guardOpts["resolver"] = r.cfg.PlaneCredential }, Fail, "compiled"},
		{"canary in the guard's log", "guard_compiled_options", func(r *run) { r.guardLogs += r.cfg.PlaneCredential }, Fail, "log"},
		{"routes separate", "separate_routes", nil, Pass, ""},
		{"broker jail in the host's namespace", "separate_routes", func(r *run) { r.j.brokerPV.NetNS = r.j.brokerPV.HostNetNS }, Fail, "capability-enabled"},
		{"broker jail with an interface", "separate_routes", func(r *run) { r.j.brokerPV.Interfaces = []string{"eth0", "lo"} }, Fail, "capability-enabled"},
		{"guarded jail in the host's namespace", "separate_routes", func(r *run) { r.j.wl.NetNS = r.j.wl.HostNetNS }, Fail, "guarded jail"},
		{"guarded jail reached the host", "separate_routes", func(r *run) { r.host.seen = []string{"tcp 198.19.7.1:5555"} }, Fail, "reached the host"},
		{"plane through the guard", "separate_routes", func(r *run) { r.guardLogs += " host=" + planeHost }, Fail, "guard's log"},
		{"plane from elsewhere", "separate_routes", func(r *run) { r.planeHits[0].From = "198.19.7.1:5000" }, Fail, "not the plane's own route"},
		{"host address reached", "tcp_host_addresses", func(r *run) { r.host.seen = []string{"tcp 127.0.0.1:5555"} }, Fail, "host listener"},
		{"tunnel refused everywhere", "loopback_dns_tunnel", func(r *run) {
			jailControl(r)
			for _, c := range specNamed(t, r, "loopback_dns_tunnel").checks {
				r.seen[c.ID] = Seen{ID: c.ID, Detail: "refused"}
			}
		}, Pass, ""},
		{"one loopback resolver answered", "loopback_dns_tunnel", func(r *run) {
			jailControl(r)
			for i, c := range specNamed(t, r, "loopback_dns_tunnel").checks {
				r.seen[c.ID] = Seen{ID: c.ID, Detail: "refused"}
				if i == 1 {
					r.seen[c.ID] = Seen{ID: c.ID, Reached: true, DNS: &DNSAnswer{RCode: "RCodeSuccess", A: []string{"198.19.7.99"}, Records: 1}}
				}
			}
		}, Fail, "127.0.0.1:53"},
		{"tunnel without its control", "loopback_dns_tunnel", func(r *run) {
			for _, c := range specNamed(t, r, "loopback_dns_tunnel").checks {
				r.seen[c.ID] = Seen{ID: c.ID, Detail: "refused"}
			}
		}, Unestablished, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fakeJailRun()
			if tt.edit != nil {
				tt.edit(r)
			}
			s := specNamed(t, r, tt.cas)
			v, why, ev := s.judge(r, s)
			if v != tt.want || !strings.Contains(why, tt.wantW) {
				t.Errorf("%s: %s (%s), want %s naming %q", tt.cas, v, why, tt.want, tt.wantW)
			}
			if js, _ := json.Marshal(ev); strings.Contains(string(js), r.cfg.PlaneCredential) {
				t.Errorf("%s: the evidence holds the canary: %s", tt.cas, js)
			}
		})
	}
}

// TestJailSpecs: the jail's matrix has every fact, the ports of the
// host's loopback in its loopback and self cases, and the host's
// loopback among the default_deny host addresses.
func TestJailSpecs(t *testing.T) {
	r := fakeJailRun()
	facts := map[conformance.Fact]int{}
	for _, s := range r.specs() {
		facts[s.fact]++
	}
	for _, f := range conformance.Facts() {
		if facts[f] == 0 {
			t.Errorf("no case of %s", f)
		}
	}
	if u := specNamed(t, r, "loopback_answer_guard_listener").checks[0].URL; !strings.Contains(u, "loop.target.test:41000") {
		t.Errorf("loopback case targets %s", u)
	}
	if u := specNamed(t, r, "guard_own_listener_answer").checks[0].URL; !strings.Contains(u, "self.target.test:42000") {
		t.Errorf("self case targets %s", u)
	}
	found := false
	for _, c := range specNamed(t, r, "tcp_host_addresses").checks {
		found = found || strings.HasPrefix(c.Addr, "127.0.0.1:")
	}
	if !found {
		t.Errorf("the host's loopback is not among the host addresses tried")
	}
}

var jail1 = checkfu.ProviderRevision{Provider: JailProvider, Revision: "1"}

// runCLI runs `checkfu matrix` of bin against target and reads its
// evidence.
func runCLI(ctx context.Context, t testing.TB, bin string, target checkfu.ProviderRevision) (*Report, string, error) {
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, bin, "matrix", "-provider", target.Provider, "-revision", target.Revision,
		"-out", filepath.Join(dir, "statement.json"), "-evidence", filepath.Join(dir, "evidence.json"))
	out, runErr := cmd.CombinedOutput()
	ev, err := os.ReadFile(filepath.Join(dir, "evidence.json"))
	if err != nil {
		return nil, string(out), err
	}
	var rep Report
	if err := json.Unmarshal(ev, &rep); err != nil {
		return nil, string(out), err
	}
	return &rep, string(out), runErr
}

var (
	jailRefOnce sync.Mutex
	jailRefRep  *Report
)

// jailReference runs the jail's matrix once per test process, through
// the checkfu binary (its Runner and the jails' init stage).
func jailReference(t *testing.T) *Report {
	t.Helper()
	needNetns(t)
	jailRefOnce.Lock()
	defer jailRefOnce.Unlock()
	if jailRefRep != nil {
		return jailRefRep
	}
	bin := testBinary(t)
	before := ownedNamespaces(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	rep, out, err := runCLI(ctx, t, bin, jail1)
	if rep == nil {
		t.Fatalf("the jail's matrix wrote no evidence: %v\n%s", err, out)
	}
	t.Logf("jail matrix: %d cases in %v (the command %v)", len(rep.Cases), rep.WallTime, time.Since(start).Round(time.Millisecond))
	for _, n := range ownedNamespaces(t) {
		if !strings.Contains(strings.Join(before, " "), n) {
			t.Errorf("namespace %s left behind", n)
		}
	}
	if err != nil {
		t.Errorf("checkfu matrix exited: %v\n%s", err, out)
	}
	jailRefRep = rep
	return rep
}

// ownedNamespaces lists the namespace topologies' namespaces.
func ownedNamespaces(t testing.TB) []string {
	ents, _ := os.ReadDir("/run/netns")
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "checkfu-mx-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestMatrixJail runs the matrix on the namespace topology with the jail
// provider: every case passes, all five facts hold, the evidence
// verifies, and the record is labelled isolated.
func TestMatrixJail(t *testing.T) {
	rep := jailReference(t)
	for _, c := range rep.Cases {
		t.Logf("%-28s %-44s %-13s %s", c.Fact, c.Name, c.Verdict, c.Why)
		if c.Verdict != Pass {
			t.Errorf("%s/%s: %s (%s), want pass", c.Fact, c.Name, c.Verdict, c.Why)
		}
	}
	if err := VerifyEvidence(rep); err != nil {
		t.Errorf("the evidence does not verify: %v", err)
	}
	rep.Target = jail1
	if held := rep.Held(); !held.Complete() {
		t.Errorf("held %s; want all five facts", held)
	}
	rec, err := rep.Record(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Label != checkfu.LabelIsolated || rep.Label != checkfu.LabelIsolated.String() {
		t.Errorf("label %s / %s, want isolated", rec.Label, rep.Label)
	}
	p, err := LookupProvider(JailProvider)
	if err != nil || !p.Runnable || p.Ceiling() != checkfu.SecurityBoundary {
		t.Errorf("jail: %+v, %v", p, err)
	}
}
