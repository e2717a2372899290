package matrix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
)

// An Edit replaces the only occurrence of Old with New.
type Edit struct{ Old, New string }

// FileEdits are the edits of one more file of a [Mutant].
type FileEdits struct {
	File  string
	Edits []Edit
}

// A Mutant is a deliberately broken guard or provider. It is built, never
// configured: its Edits apply to a scratch copy of one source file of the
// module, the checkfu binary is rebuilt from it with `go build -overlay`
// (the working tree is never written), and the matrix runs with that
// binary as both its guard and its Runner. No switch in the shipped binary
// can turn a check off.
type Mutant struct {
	// Name says what is broken.
	Name string
	// Fact is the fact whose cases must catch it.
	Fact conformance.Fact
	// File is the module-relative source file the edits apply to.
	File string
	// Edits are applied in order; each Old must occur exactly once.
	Edits []Edit
	// More are edits to further files of the same mutant.
	More []FileEdits
	// Provider is the provider whose topology the mutant breaks; empty
	// for a mutant of the guard, which every runnable provider's matrix
	// must kill.
	Provider string
}

// mutants are the matrix's mutation proofs, one per way a guard or a
// provider can pass a weaker matrix.
var mutants = []Mutant{
	{Name: "connect-time classification deleted", Fact: conformance.ConnectTimePublicAddress, File: "egress/dial.go",
		Edits: []Edit{{Old: "if !IsPublic(a) {", New: "if false {"}}},
	{Name: "classification at resolve time only", Fact: conformance.ConnectTimePublicAddress, File: "egress/dial.go",
		// The answer is classified, then the name is resolved again by
		// the dialer: the rebinding window.
		Edits: []Edit{
			{Old: "nd := net.Dialer{Timeout: connectShare(time.Until(deadline), len(addrs)-i), ControlContext: d.control(own)}", New: "nd := net.Dialer{Timeout: connectShare(time.Until(deadline), len(addrs)-i), Resolver: d.resolver}\n\t\t_, _ = own, a"},
			{Old: "c, err := nd.DialContext(ctx, network, netip.AddrPortFrom(a, port).String())", New: "c, err := nd.DialContext(context.WithValue(ctx, askedKey{}, target[:strings.LastIndex(target, \":\")]+\".\"), network, target)"},
		}},
	{Name: "redirects followed", Fact: conformance.RedirectRecheck, File: "egress/forward.go",
		Edits: []Edit{{Old: "\t\tg.copyResponse(w, r, uc, resp, authority, stop)\n", New: `		if loc, lerr := resp.Location(); lerr == nil && resp.StatusCode/100 == 3 {
			resp.Body.Close()
			stop()
			uc.Close()
			c, derr := g.dial(r.Context(), "tcp", loc.Host)
			if derr != nil {
				g.fail(w, r, derr)
				return
			}
			uc = newUpstreamConn(c)
			out.URL = &url.URL{Path: loc.Path, RawQuery: loc.RawQuery}
			out.Host = loc.Host
			if resp, err = g.roundTrip(uc, out); err != nil {
				uc.Close()
				g.fail(w, r, &UpstreamError{Code: CodeUpstreamFailed, Target: loc.Host, Err: err})
				return
			}
			stop = func() bool { return true }
			authority = loc.Host
		}
		g.copyResponse(w, r, uc, resp, authority, stop)
`}}},
	{Name: "exact match loosened to suffix", Fact: conformance.ExactDestinationMatch, File: "egress/policy.go",
		Edits: []Edit{{Old: "\t\treturn checkfu.Refuse(CodeHostNotAllowed, \"egress: %s is not in the allowlist\", net2(host, port))", New: `		for _, hp := range c.hosts {
			if hp.Port == port && strings.HasSuffix(host, hp.Host) {
				return nil
			}
		}
		return checkfu.Refuse(CodeHostNotAllowed, "egress: %s is not in the allowlist", net2(host, port))`}}},
	{Name: "default route on the workload network", Fact: conformance.DefaultDeny, File: "adapters/docker/topology.go", Provider: DockerProvider,
		Edits: []Edit{
			{Old: `Name: a.innerName, CheckDuplicate: true, Driver: "bridge", Internal: true,`, New: `Name: a.innerName, CheckDuplicate: true, Driver: "bridge", Internal: false,`},
			{Old: `opts["com.docker.network.bridge.inhibit_ipv4"] = "true"`, New: `_ = opts`},
			{Old: `if err := a.addRule(ctx, bin, "INPUT", "-i", a.innerBridge, "-j", "DROP"); err != nil {`, New: `if err := error(nil); bin == "" && err != nil {`},
		}},
	{Name: "embedded DNS forwards for the workload", Fact: conformance.DefaultDeny, File: "adapters/docker/instance.go", Provider: DockerProvider,
		// The allowlist workload's embedded DNS gets the topology's DNS
		// server (its outer .53) as upstream and a route to it, the
		// outer network, attached after the read-back: names the
		// workload asks leave the sandbox as DNS questions.
		Edits: []Edit{
			{Old: "\t\thc.Dns = []string{BlackholeDNS}\n", New: "\t\thc.Dns = []string{i.cfg.Allowlist.addr(i.cfg.Allowlist.outer, 53).String()}\n"},
			{Old: "\tif err := c.StartContainer(ctx, id); err != nil {\n", New: "\tif a := i.cfg.Allowlist; a != nil {\n\t\tif err := c.ConnectNetwork(ctx, a.outerName, id, \"\"); err != nil {\n\t\t\treturn err\n\t\t}\n\t}\n\tif err := c.StartContainer(ctx, id); err != nil {\n"},
		}},
	{Name: "plane credential in the guard's environment", Fact: conformance.AuthoritySeparation, File: "adapters/docker/topology.go", Provider: DockerProvider,
		// The Runner hands the guard its own environment, where it holds
		// the plane credential.
		Edits: []Edit{{Old: "Image: cfg.GuardImage, Cmd: cmd, User: DefaultUser,", New: "Image: cfg.GuardImage, Cmd: cmd, User: DefaultUser, Env: os.Environ(),"}}},
	{Name: "header denylist emptied", Fact: conformance.ExactDestinationMatch, File: "egress/forward.go",
		// The routing headers a workload sends (Forwarded, X-Forwarded-*,
		// X-Real-Ip, Via, ...) reach the destination, claiming another
		// host or client.
		Edits: []Edit{{Old: "\tremoveForwarding(out.Header)\n", New: "\n"}}},
	{Name: "upstream failure answered as a denial", Fact: conformance.ConnectTimePublicAddress, File: "egress/guard.go",
		Edits: []Edit{{Old: "\tw.Header().Set(UpstreamFailureHeader, string(ue.Code))\n\thttp.Error(w, \"checkfu guard: \"+ue.Error(), http.StatusBadGateway)", New: "\tg.refuse(w, r, checkfu.Refuse(CodeDestinationNotPublic, \"egress: %s\", ue.Error()))"}}},
}

// jailMutants break the jail provider: each is built into the binary
// under test, which is the jail's Runner and init stage.
var jailMutants = []Mutant{
	{Name: "jail keeps the host's network namespace", Fact: conformance.DefaultDeny, File: "adapters/jail/instance_linux.go", Provider: JailProvider,
		// The jail shares the Runner's network namespace, and the
		// read-back that would refuse it is not enforced.
		Edits: []Edit{
			{Old: "unix.CLONE_NEWPID | unix.CLONE_NEWNET |", New: "unix.CLONE_NEWPID |"},
			{Old: "if ev.Enforcement != i.p.desc.Capability.Enforcement || ev.Limits != i.spec.Limits {", New: "if false {"},
		},
		// Its init stage, in the host's namespace, cannot bring up lo;
		// the failure is ignored.
		More: []FileEdits{{File: "adapters/jail/internal/initstage/stage_linux.go", Edits: []Edit{
			{Old: "\tif err := loopbackUp(); err != nil {\n\t\treturn err\n\t}\n", New: "\tloopbackUp()\n"},
		}}}},
	{Name: "relay dials the destination itself", Fact: conformance.ExactDestinationMatch, File: "adapters/jail/relay.go", Provider: JailProvider,
		// The relay reads the workload's request and connects where it
		// names, from the Runner's namespace: the guard is bypassed.
		Edits: []Edit{
			{Old: "import (\n\t\"context\"\n", New: "import (\n\t\"bufio\"\n\t\"context\"\n\t\"net/http\"\n"},
			{Old: "\t\t\tu, err := r.dial(r.ctx)\n\t\t\tif err != nil {\n\t\t\t\treturn\n\t\t\t}\n",
				New: "\t\t\treq, err := http.ReadRequest(bufio.NewReader(c))\n\t\t\tif err != nil {\n\t\t\t\treturn\n\t\t\t}\n\t\t\tu, err := net.DialTimeout(\"tcp\", req.Host, relayDialTimeout)\n\t\t\tif err != nil {\n\t\t\t\treturn\n\t\t\t}\n\t\t\tif req.Write(u) != nil {\n\t\t\t\tu.Close()\n\t\t\t\treturn\n\t\t\t}\n"},
		}},
	{Name: "jail guard enforces no allowlist", Fact: conformance.ExactDestinationMatch, File: "adapters/jail/guard.go", Provider: JailProvider,
		// LocalGuard compiles an unrestricted policy instead of the
		// instance's hosts.
		Edits: []Edit{{Old: "\t\t}{\"allowlist\", hosts})\n", New: "\t\t}{\"allowlist\", hosts})\n\t\tdoc = []byte(`{\"type\":\"unrestricted\"}`)\n"}}},
	{Name: "jail inherits the Runner's environment", Fact: conformance.AuthoritySeparation, File: "adapters/jail/instance_linux.go", Provider: JailProvider,
		Edits: []Edit{{Old: "\treturn lastWins(append(env, extra...))\n", New: "\treturn lastWins(append(append(env, os.Environ()...), extra...))\n"}}},
	{Name: "jail binds a host path writable", Fact: conformance.AuthoritySeparation, File: "adapters/jail/instance_linux.go", Provider: JailProvider,
		Edits: []Edit{{Old: "bind(b.Source, b.Target, fi.IsDir(), false)", New: "bind(b.Source, b.Target, fi.IsDir(), true)"}}},
}

// Mutants returns the matrix's mutants, of every provider.
func Mutants() []Mutant { return append(append([]Mutant(nil), mutants...), jailMutants...) }

// MutantsFor returns the mutants a matrix run on provider must kill: the
// guard's and the provider's own.
func MutantsFor(provider string) []Mutant {
	var out []Mutant
	for _, m := range Mutants() {
		if m.Provider == "" || m.Provider == provider {
			out = append(out, m)
		}
	}
	return out
}

// MutantConfig configures [RunMutant].
type MutantConfig struct {
	// ModuleDir is the checkfu module's source directory. Required.
	ModuleDir string
	// Target is the provider revision the mutant's statement names.
	Target checkfu.ProviderRevision
	// Reference is the unbroken run; a mutant is killed only by a case
	// that passed there.
	Reference *Report
	// Label is the KEY=VALUE label the mutant's run puts on what it
	// creates; empty means docker.DefaultLabel.
	Label string
}

// A MutantResult is what one mutant's matrix observed.
type MutantResult struct {
	Mutant Mutant
	// Killed reports whether a case of Mutant.Fact that passed on the
	// reference failed on the mutant.
	Killed bool
	// By names the cases that killed it.
	By []string
	// Held is what the mutant's matrix held.
	Held conformance.FactSet
	Took time.Duration
}

// RunMutant builds the mutant's checkfu binary and runs `checkfu matrix`
// with it, in a subprocess (the Runner itself may be the broken part).
// An error means the mutant could not be built or its matrix could not
// observe, which is not a kill.
func RunMutant(ctx context.Context, cfg MutantConfig, m Mutant) (MutantResult, error) {
	start := time.Now()
	res := MutantResult{Mutant: m}
	dir, err := os.MkdirTemp("", "checkfu-mutant-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	bin, err := buildMutant(ctx, cfg.ModuleDir, dir, m)
	if err != nil {
		return res, err
	}
	evPath := filepath.Join(dir, "evidence.json")
	cmd := exec.CommandContext(ctx, bin, "matrix", "-provider", cfg.Target.Provider, "-revision", cfg.Target.Revision,
		"-binary", bin, "-out", filepath.Join(dir, "statement.json"), "-evidence", evPath)
	if cfg.Label != "" {
		cmd.Args = append(cmd.Args, "-label", cfg.Label)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	ev, err := os.ReadFile(evPath)
	if err != nil {
		return res, checkfu.Refuse(CodeProbeFailed, "matrix: mutant %q: its matrix wrote no evidence (%v): %s", m.Name, runErr, checkfu.Quote(lastLines(out.String(), 3)))
	}
	var rep Report
	if err := json.Unmarshal(ev, &rep); err != nil {
		return res, &checkfu.Refusal{Code: CodeProbeFailed, Message: "matrix: mutant evidence", Err: err}
	}
	res.Held = rep.Held()
	passed := map[string]bool{}
	if cfg.Reference != nil {
		for _, c := range cfg.Reference.Cases {
			passed[c.Name] = c.Verdict == Pass
		}
	}
	for _, c := range rep.Cases {
		if c.Fact == m.Fact && c.Verdict == Fail && (cfg.Reference == nil || passed[c.Name]) {
			res.By = append(res.By, string(c.Fact)+"/"+c.Name)
		}
	}
	res.Killed = len(res.By) > 0 && runErr != nil
	res.Took = time.Since(start)
	return res, nil
}

// buildMutant applies m to a scratch copy and builds a static checkfu
// binary with the copy overlaid.
func buildMutant(ctx context.Context, moduleDir, dir string, m Mutant) (string, error) {
	replace := map[string]string{}
	for i, fe := range append([]FileEdits{{File: m.File, Edits: m.Edits}}, m.More...) {
		src := filepath.Join(moduleDir, fe.File)
		b, err := os.ReadFile(src)
		if err != nil {
			return "", &checkfu.Refusal{Code: CodeMutantBuildFailed, Message: "matrix: mutant " + checkfu.Quote(m.Name), Err: err}
		}
		text := string(b)
		for _, e := range fe.Edits {
			if n := strings.Count(text, e.Old); n != 1 {
				return "", checkfu.Refuse(CodeMutantBuildFailed, "matrix: mutant %q: %s holds %s %d times, want once (update the mutant)", m.Name, fe.File, checkfu.Quote(e.Old), n)
			}
			text = strings.Replace(text, e.Old, e.New, 1)
		}
		mutated := filepath.Join(dir, strconv.Itoa(i)+"-"+filepath.Base(fe.File))
		if err := os.WriteFile(mutated, []byte(text), 0o644); err != nil {
			return "", err
		}
		abs, err := filepath.Abs(src)
		if err != nil {
			return "", err
		}
		replace[abs] = mutated
	}
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": replace})
	ovPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "checkfu")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-overlay", ovPath, "-o", bin, "./cmd/checkfu")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", checkfu.Refuse(CodeMutantBuildFailed, "matrix: mutant %q does not build: %s", m.Name, checkfu.Quote(lastLines(string(msg), 3)))
	}
	return bin, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// String describes r in one line.
func (r MutantResult) String() string {
	if r.Killed {
		return fmt.Sprintf("killed   %-45s by %s (%v)", r.Mutant.Name, strings.Join(r.By, ", "), r.Took.Round(time.Second))
	}
	return fmt.Sprintf("SURVIVED %-45s %s still held by its matrix (held: %s)", r.Mutant.Name, r.Mutant.Fact, r.Held)
}
