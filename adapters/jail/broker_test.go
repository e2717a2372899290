//go:build linux

package jail_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/egress"
)

// TestBrokerIsTheOnlyWayOut: CreateWithBroker binds the broker's
// directory read-only at BrokerMount, where the workload reaches the
// socket but cannot write; with network allowlist (a relay to a guard
// beside the broker) it is refused, so a capability-enabled jail has
// one way out.
func TestBrokerIsTheOnlyWayOut(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	ln, err := net.Listen("unix", filepath.Join(dir, "broker.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(filepath.Join(dir, "broker.sock"), 0o777)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	p := newProvider(t, jail.Config{Guard: jail.LocalGuard(jail.GuardOptions{})})

	inst, err := jail.CreateForTest(t, p, p.Spec("broker-none", testDigest), dir)
	if err != nil {
		t.Fatal(err)
	}
	sock := p.BrokerPath() + "/broker.sock"
	if ok, msg := runIn(t, inst, []string{probePath, escapeArg, "unix", sock}); !ok {
		t.Fatalf("control: the broker's socket is not reachable: %s", msg)
	}
	if ok, msg := runIn(t, inst, []string{probePath, escapeArg, "write", p.BrokerPath() + "/x"}); ok {
		t.Errorf("the broker's directory is writable: %s", msg)
	}

	spec := p.Spec("broker-allowlist", testDigest)
	spec.NetworkMode = "allowlist"
	spec.AllowedHosts = []egress.HostPort{{Host: "example.com", Port: 443}}
	if _, err := jail.CreateForTest(t, p, spec, dir); !errors.Is(err, adapters.CodeSpecUnsupported) {
		t.Fatalf("CreateWithBroker(allowlist) = %v, want %s", err, adapters.CodeSpecUnsupported)
	}
	// Control: the same spec without a broker is offered.
	if _, err := jail.CreateForTest(t, p, spec, ""); err != nil {
		t.Fatalf("control: Create(allowlist) = %v", err)
	}
}
