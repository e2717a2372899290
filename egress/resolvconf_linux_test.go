package egress_test

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/checkfu/checkfu/egress"
)

// withResolvConf runs the calling test again in a child process that has
// its own mount namespace, with conf bind-mounted over /etc/resolv.conf,
// and reports whether the caller is that child (and should run its body).
// In the parent it waits for the child and fails the test when the child
// fails. It skips where the namespace cannot be made.
func withResolvConf(t *testing.T, conf string) bool {
	t.Helper()
	const env = "CHECKFU_EGRESS_RESOLV_CONF"
	if path := os.Getenv(env); path != "" {
		if err := syscall.Mount(path, "/etc/resolv.conf", "", syscall.MS_BIND, ""); err != nil {
			t.Fatalf("bind-mount resolv.conf: %v", err)
		}
		return true
	}
	path := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	if os.Getuid() != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "--- FAIL") {
		t.Skipf("cannot run in a mount namespace: %v\n%s", err, out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return false
}

// TestDialerIgnoresSearchList resolves names under a resolv.conf with a
// search list and ndots:5, as in a Kubernetes pod. An allowlisted name
// that does not exist must fail to resolve, never become the search
// domain's name (which here points at a live listener), and an existing
// name must be asked about as itself only: the Dialer resolves the rooted
// name. The Client and the Guard dial through the Dialer.
func TestDialerIgnoresSearchList(t *testing.T) {
	if !withResolvConf(t, "nameserver 198.18.255.53\nsearch evil.test\noptions ndots:5 attempts:1 timeout:1\n") {
		return
	}
	dns := startDNS(t)
	evil := listenLive(t, "127.0.0.2:0")
	legit := listenLive(t, "127.0.0.1:0")
	dns.Set("gone.test.evil.test", netip.MustParseAddr("127.0.0.2"))
	dns.Set("pypi.test.evil.test", netip.MustParseAddr("127.0.0.2"))
	dns.Set("pypi.test", netip.MustParseAddr("127.0.0.1"))
	d, err := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		t.Fatal(err)
	}

	_, err = d.DialContext(context.Background(), "tcp", hostPort("gone.test", evil.addrPort().Port()))
	wantUpstream(t, err, egress.CodeDNSFailed)
	if n := evil.accepted.Load(); n != 0 {
		t.Fatalf("the search domain's listener accepted %d connections", n)
	}

	c, err := d.DialContext(context.Background(), "tcp", hostPort("pypi.test", legit.addrPort().Port()))
	if err != nil {
		t.Fatalf("dial pypi.test: %v", err)
	}
	c.Close()
	if n := evil.accepted.Load(); n != 0 {
		t.Fatalf("the search domain's listener accepted %d connections", n)
	}
	for _, name := range dns.Log() {
		if strings.Contains(strings.ToLower(name), "evil.test") {
			t.Errorf("the resolver asked about %q: the search list was applied (log %q)", name, dns.Log())
		}
	}
}
