package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
	"github.com/checkfu/checkfu/internal/clitest"
)

func writePolicy(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A guardCommand is a running `checkfu guard`, past its ready line.
type guardCommand struct {
	cmd    *exec.Cmd
	addr   string           // where it listens, from its ready line
	stdout *bufio.Reader    // the rest of its stdout
	stderr *strings.Builder // read it once the guard has exited, or to report a failure
}

// startGuardCommand starts `checkfu guard -listen 127.0.0.1:0` with
// args and reads its ready line. The test's cleanup kills it unless the
// test has waited for it.
func startGuardCommand(t *testing.T, args ...string) *guardCommand {
	t.Helper()
	g := &guardCommand{cmd: exec.Command(clitest.Binary(t), append([]string{"guard", "-listen", "127.0.0.1:0"}, args...)...), stderr: &strings.Builder{}}
	stdout, err := g.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g.cmd.Stderr = g.stderr
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if g.cmd.ProcessState == nil {
			g.cmd.Process.Kill()
			g.cmd.Wait()
		}
	})
	g.stdout = bufio.NewReader(stdout)
	line, err := g.stdout.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("ready line %q, %v, want \"listening on ADDR\" (stderr %q)", line, err, g.stderr.String())
	}
	g.addr = addr
	return g
}

func TestGuardCommandLine(t *testing.T) {
	good := writePolicy(t, `{"type":"none"}`)
	bad := writePolicy(t, `{"type":"none","required_egress_certification":"security_boundary"}`)
	empty := writePolicy(t, `{"type":"allowlist","allow_mcp_servers":true}`)
	tests := []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"guard"}, exitUsage, "needs -listen and -policy"},
		{[]string{"guard", "-listen", "127.0.0.1:0"}, exitUsage, "needs -listen and -policy"},
		{[]string{"guard", "-listen", "127.0.0.1:0", "-policy", good, "extra"}, exitUsage, "takes no arguments"},
		{[]string{"guard", "-listen", "127.0.0.1:0", "-policy", good, "-treat-as-public", "nope"}, exitUsage, "not a CIDR"},
		{[]string{"guard", "-listen", "127.0.0.1:0", "-policy", filepath.Join(t.TempDir(), "missing.json")}, exitFailed, "hint:"},
		{[]string{"guard", "-listen", "127.0.0.1:0", "-policy", bad}, exitFailed, "code: policy_invalid"},
		{[]string{"guard", "-listen", "127.0.0.1:0", "-policy", empty}, exitFailed, "code: allowlist_empty"},
		{[]string{"guard", "-listen", "127.0.0.1:0", "-policy", good, "-treat-as-public", "10.0.0.0/8"}, exitFailed, "code: config_invalid"},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, "", tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("checkfu %v: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
}

// TestGuardCapFlagsReachTheGuard: each cap flag of checkfu guard reaches
// the guard's configuration: at -1 the guard refuses to start
// (config_invalid), where an unwired flag would leave the cap derived and
// the guard would start listening.
func TestGuardCapFlagsReachTheGuard(t *testing.T) {
	good := writePolicy(t, `{"type":"none"}`)
	for _, flag := range []string{"-max-connections", "-max-tunnels", "-max-tunnels-per-source", "-max-idle-connections"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, clitest.Binary(t), "guard", "-listen", "127.0.0.1:0", "-policy", good, flag, "-1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		if strings.Contains(string(out), "listening on") || err == nil || !strings.Contains(stderr.String(), "code: config_invalid") {
			t.Errorf("checkfu guard %s -1: %v, stdout %q, stderr %q; want it refused config_invalid before listening", flag, err, out, stderr.String())
		}
	}
}

// TestGuardProcess runs the real binary as a workload's guard against a
// topology the test owns: its own DNS server, a legitimate upstream on
// 127.0.0.1 (marked public with -treat-as-public) and a LIVE listener on
// the private 127.0.0.2 that an allowlisted name resolves to.
func TestGuardProcess(t *testing.T) {
	dns, err := dnstest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	t.Cleanup(upstream.Close)
	_, upPort, _ := net.SplitHostPort(upstream.Listener.Addr().String())

	private, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := private.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { private.Close(); wg.Wait() })
	_, privPort, _ := net.SplitHostPort(private.Addr().String())

	dns.Set("api.example.test", netip.MustParseAddr("127.0.0.1"))
	dns.Set("rebind.example.test", netip.MustParseAddr("127.0.0.2"))
	policy := writePolicy(t, `{"type":"allowlist","allowed_hosts":["api.example.test:`+upPort+`","rebind.example.test:`+privPort+`"]}`)

	g := startGuardCommand(t, "-policy", policy, "-resolver", dns.Addr(), "-treat-as-public", "127.0.0.1/32")
	cmd, addr, stdout, stderr := g.cmd, g.addr, g.stdout, g.stderr
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}), DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	get := func(u string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, body := get("http://rebind.example.test:" + privPort + "/")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(egress.RefusalHeader) != string(egress.CodeDestinationNotPublic) {
		t.Errorf("rebinding: %d %q %q, want 403 destination_not_public", resp.StatusCode, resp.Header.Get(egress.RefusalHeader), body)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the private listener accepted %d connections, want 0", n)
	}
	resp, body = get("http://api.example.test:" + upPort + "/")
	if resp.StatusCode != http.StatusOK || body != "hello from api.example.test:"+upPort {
		t.Errorf("legit: %d %q", resp.StatusCode, body)
	}
	resp, _ = get("http://other.example.test/")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(egress.RefusalHeader) != string(egress.CodeHostNotAllowed) {
		t.Errorf("other: %d %q", resp.StatusCode, resp.Header.Get(egress.RefusalHeader))
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	if err != nil {
		t.Errorf("guard exited with %v after SIGTERM (stderr %q)", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "TESTING ONLY") || !strings.Contains(stderr.String(), "127.0.0.1/32") {
		t.Errorf("stderr does not log the treat-as-public block: %q", stderr.String())
	}
}

// TestResolverAddress checks -resolver's host:port handling: an address is
// used as given, a name is looked up once and its first address used, and
// anything else is refused before the guard starts.
func TestResolverAddress(t *testing.T) {
	lookup := func(_ context.Context, network, host string) ([]netip.Addr, error) {
		switch host {
		case "dns.test":
			return []netip.Addr{netip.MustParseAddr("::ffff:198.18.0.53"), netip.MustParseAddr("198.18.0.54")}, nil
		case "empty.test":
			return nil, nil
		}
		return nil, fmt.Errorf("no such host %q", host)
	}
	good := map[string]string{
		"":                 "",
		"198.18.0.53:53":   "198.18.0.53:53",
		"[2001:2::53]:853": "[2001:2::53]:853",
		"dns.test:5353":    "198.18.0.53:5353",
	}
	for in, want := range good {
		got, err := resolverAddress(context.Background(), in, lookup)
		if err != nil || got != want {
			t.Errorf("resolverAddress(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"53", ":53", "dns.test:", "dns.test", "missing.test:53", "empty.test:53", "dns.test:abc", "198.18.0.53:0", "198.18.0.53:65536"} {
		if got, err := resolverAddress(context.Background(), in, lookup); err == nil {
			t.Errorf("resolverAddress(%q) = %q, want an error", in, got)
		}
	}
	// The system resolver, as the guard uses it: localhost is a loopback
	// address wherever /etc/hosts is sane.
	got, err := resolverAddress(context.Background(), "localhost:53", net.DefaultResolver.LookupNetIP)
	if err != nil {
		t.Skipf("the system resolver cannot look up localhost here: %v", err)
	}
	host, _, _ := net.SplitHostPort(got)
	if a, err := netip.ParseAddr(host); err != nil || !a.IsLoopback() {
		t.Errorf("resolverAddress(localhost:53) = %q, want a loopback address", got)
	}
}

// TestGuardHintByCode: the hint follows the refusal's code, not the call
// that returned it: a policy refusal gets the policy hint wherever it
// comes from, and never the -treat-as-public one; an error without a code
// gets none.
func TestGuardHintByCode(t *testing.T) {
	hintOf := func(err error) string {
		var h hinted
		if errors.As(err, &h) {
			return h.hint
		}
		return ""
	}
	_, perr := egress.ParseNetworkPolicy([]byte(`{"type":"open"}`))
	if h := hintOf(guardHint(perr)); !strings.Contains(h, "fix the policy file") || strings.Contains(h, "-treat-as-public") {
		t.Errorf("policy refusal hint %q", h)
	}
	_, eerr := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allow_mcp_servers":true}`))
	if h := hintOf(guardHint(eerr)); !strings.Contains(h, "somewhere to reach") {
		t.Errorf("empty allowlist hint %q", h)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, gerr := egress.NewGuard(egress.GuardConfig{Listener: ln})
	if h := hintOf(guardHint(gerr)); strings.Contains(h, "-treat-as-public") || !strings.Contains(h, "fix the policy file") {
		t.Errorf("NewGuard without a policy: hint %q, want the policy hint, not -treat-as-public", h)
	}
	_, cerr := egress.NewGuard(egress.GuardConfig{Listener: ln, Policy: mustCompile(t, `{"type":"none"}`), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	if h := hintOf(guardHint(cerr)); !strings.Contains(h, "-treat-as-public") {
		t.Errorf("NewGuard with a wide test block: hint %q", h)
	}
	if h := hintOf(guardHint(errors.New("plain"))); h != "" {
		t.Errorf("a plain error got hint %q", h)
	}
}

func mustCompile(t *testing.T, doc string) *egress.CompiledPolicy {
	t.Helper()
	p, err := egress.ParseNetworkPolicy([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := p.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}
